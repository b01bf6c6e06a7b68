package io.github.ratelimit.spring.client;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one instance knows of one partner's limits, and the pacing rule over it (the Java twin of
 * {@link RedisPartnerState}'s scripts; docs/architecture.md, "Calling rate-limited APIs"). Times are milliseconds
 * of one clock. Not thread-safe: {@link LocalPartnerState} locks it.
 */
final class PartnerBook {

	/** Spacing of calls when the partner's limit or window is not known: one probe a second. */
	static final long PROBE_MILLIS = 1000;

	/**
	 * One quota: the estimate of what is left, when it resets, the next free turn, the limit (reported, else the
	 * highest remaining seen; 0: unknown) and the window (reported, else the longest time to a reset seen).
	 */
	static final class Entry {

		long remaining;

		long resetAt;

		long next;

		long limit;

		long windowMillis;

		/** Kept past its reset for one window, so that calls queued for the reset keep their spacing. */
		long expiresAt() {
			return this.resetAt + Math.max(this.windowMillis, PROBE_MILLIS);
		}

		/** The gap between calls once none is left: one window's share of the limit, else one probe a second. */
		long spacing() {
			return (this.limit > 0 && this.windowMillis > 0) ? Math.max(1, this.windowMillis / this.limit)
					: PROBE_MILLIS;
		}

	}

	private final Map<String, Entry> entries = new LinkedHashMap<>();

	/** The end of a Retry-After. */
	private long blockedUntil;

	/** The next turn of calls released after a Retry-After (they go one spacing apart, not all at its end). */
	private long releaseNext;

	/** Takes the next call's turn without a budget (tests). */
	long reserve(long now, double paceBelow) {
		return reserve(now, paceBelow, Long.MAX_VALUE);
	}

	/**
	 * Takes the next call's turn: how long it waits (0: it goes now). When the wait exceeds the budget nothing is
	 * taken (the call is refused and must not use up a turn); else every quota's estimate counts the call.
	 * @param paceBelow the share of the limit below which calls are spread (1: always)
	 * @param budgetMillis the longest the call may wait
	 */
	long reserve(long now, double paceBelow, long budgetMillis) {
		long release = Math.max(this.blockedUntil, this.releaseNext);
		long wait = Math.max(0, release - now);
		long spacing = PROBE_MILLIS;
		Map<Entry, long[]> turns = new LinkedHashMap<>();
		for (Iterator<Entry> it = this.entries.values().iterator(); it.hasNext();) {
			Entry entry = it.next();
			if (entry.expiresAt() <= now) {
				it.remove();
				continue;
			}
			long[] turn = turn(entry, now, paceBelow);
			turns.put(entry, turn);
			wait = Math.max(wait, turn[0] - now);
			spacing = Math.min(spacing, entry.spacing());
		}
		if (wait > Math.max(0, budgetMillis)) {
			return wait;
		}
		turns.forEach((entry, turn) -> {
			entry.next = turn[1];
			entry.remaining = Math.max(0, entry.remaining - 1);
		});
		if (release > now) {
			this.releaseNext = now + wait + spacing;
		}
		return wait;
	}

	/** The pacing rule for one quota: the call's turn and the entry's next free turn after it. */
	static long[] turn(Entry entry, long now, double paceBelow) {
		boolean paced = (entry.limit > 0) ? entry.remaining < entry.limit * paceBelow : entry.remaining == 0;
		if (entry.remaining > 0 && !paced) {
			return new long[] { now, entry.next };
		}
		if (entry.remaining > 0) {
			// the quota left spread evenly over the time to its reset
			long turn = Math.max(now, entry.next);
			return new long[] { turn, turn + Math.max(0, entry.resetAt - turn) / entry.remaining };
		}
		// none left: from the reset on, one spacing apart until the partner's next response says more
		long turn = Math.max(now, Math.max(entry.resetAt, entry.next));
		return new long[] { turn, turn + entry.spacing() };
	}

	/**
	 * Records what a response said. A reset more than a second later than the stored one starts a new window;
	 * otherwise (the same window, a drifting reset, a late response of the previous window) the estimate never
	 * rises above either figure.
	 */
	void learn(long now, PartnerResponse response) {
		if (response.retryAfter() != null && response.retryAfter().toMillis() > 0) {
			this.blockedUntil = Math.max(this.blockedUntil, now + response.retryAfter().toMillis());
		}
		for (PartnerQuota quota : response.quotas()) {
			Entry entry = this.entries.get(quota.entry());
			long resetAt = now + quota.resetSeconds() * 1000;
			if (entry == null) {
				if (this.entries.size() >= PartnerHeaders.MAX_QUOTAS) {
					continue;
				}
				entry = new Entry();
				entry.remaining = quota.remaining();
				entry.resetAt = resetAt;
				this.entries.put(quota.entry(), entry);
			}
			else if (resetAt > entry.resetAt + 1000) {
				entry.remaining = quota.remaining();
				entry.resetAt = resetAt;
			}
			else {
				entry.remaining = Math.min(entry.remaining, quota.remaining());
				entry.resetAt = Math.max(entry.resetAt, resetAt);
			}
			entry.limit = (quota.limit() != null) ? quota.limit() : Math.max(entry.limit, quota.remaining());
			entry.windowMillis = (quota.windowSeconds() != null) ? quota.windowSeconds() * 1000
					: Math.max(entry.windowMillis, quota.resetSeconds() * 1000);
		}
	}

	/** Puts back an entry as stored elsewhere (Redis), to describe it. */
	void restore(String name, Entry entry) {
		this.entries.put(name, entry);
	}

	void restoreBlockedUntil(long blockedUntil) {
		this.blockedUntil = blockedUntil;
	}

	/** The quotas known now (by entry name) and how long calls are held by a Retry-After. */
	Map<String, Object> describe(long now) {
		Map<String, Object> quotas = new LinkedHashMap<>();
		this.entries.forEach((name, entry) -> {
			if (entry.resetAt > now) {
				quotas.put(name, PartnerStates.describe(entry.remaining, entry.resetAt - now, entry.limit,
						entry.windowMillis));
			}
		});
		return PartnerStates.describe(quotas, Math.max(0, this.blockedUntil - now));
	}

}
