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

	/** One quota: the estimate of what is left, when it resets, the next free turn, the limit and window (0: unknown). */
	static final class Entry {

		long remaining;

		long resetAt;

		long next;

		long limit;

		long windowMillis;

	}

	private final Map<String, Entry> entries = new LinkedHashMap<>();

	private long blockedUntil;

	/**
	 * Takes the next call's turn: how long it waits (0: it goes now). Every quota's estimate counts the call.
	 * @param paceBelow the share of the limit below which calls are spread (1: always)
	 */
	long reserve(long now, double paceBelow) {
		long wait = Math.max(0, this.blockedUntil - now);
		for (Iterator<Entry> it = this.entries.values().iterator(); it.hasNext();) {
			Entry entry = it.next();
			if (entry.resetAt <= now) {
				it.remove();
				continue;
			}
			long turn = turn(entry, now, paceBelow);
			wait = Math.max(wait, turn - now);
		}
		return wait;
	}

	/** The pacing rule for one quota: the call's turn, and the entry moved on past it. */
	static long turn(Entry entry, long now, double paceBelow) {
		long turn;
		boolean paced = entry.limit == 0 || entry.remaining < entry.limit * paceBelow;
		if (entry.remaining > 0 && !paced) {
			turn = now;
		}
		else if (entry.remaining > 0) {
			// the quota left spread evenly over the time to its reset
			turn = Math.max(now, entry.next);
			entry.next = turn + Math.max(0, entry.resetAt - turn) / entry.remaining;
		}
		else {
			// none left: after the reset, one window's share of the limit apart when the partner said them
			turn = Math.max(entry.resetAt, entry.next);
			entry.next = turn + ((entry.limit > 0) ? entry.windowMillis / entry.limit : 0);
		}
		entry.remaining = Math.max(0, entry.remaining - 1);
		return turn;
	}

	/** Records what a response said: the partner's figures, never more left than this instance's own count. */
	void learn(long now, PartnerResponse response) {
		if (response.retryAfter() != null) {
			this.blockedUntil = Math.max(this.blockedUntil, now + response.retryAfter().toMillis());
		}
		for (PartnerQuota quota : response.quotas()) {
			Entry entry = this.entries.get(quota.entry());
			if (entry == null) {
				if (this.entries.size() >= PartnerHeaders.MAX_QUOTAS) {
					continue;
				}
				entry = new Entry();
				this.entries.put(quota.entry(), entry);
			}
			long resetAt = now + quota.resetSeconds() * 1000;
			boolean sameWindow = Math.abs(resetAt - entry.resetAt) < 1000;
			entry.remaining = sameWindow ? Math.min(entry.remaining, quota.remaining()) : quota.remaining();
			entry.resetAt = resetAt;
			entry.limit = (quota.limit() != null) ? quota.limit() : 0;
			entry.windowMillis = (quota.windowSeconds() != null) ? quota.windowSeconds() * 1000 : 0;
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
