package io.github.ratelimit.core.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend.Acquisition;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest.Entry;
import org.jspecify.annotations.Nullable;

/**
 * One instance's slice of one key's quota: what it may still spend, until when (on the local monotonic clock), and
 * what Redis said last. Every method is called holding the slice's monitor (architecture, "Leased quotas").
 */
final class LeasedSlice {

	/** Spendable permits; void once {@link #deadlineNanos} has passed. */
	private long permits;

	private long deadlineNanos;

	/** The start of the window the slice was taken in (fixed window), -1 for none. */
	private long windowStart = -1;

	/** What the last reply said Redis had left, the server time it was made at and when it arrived (local). */
	private long redisRemaining;

	private long redisTimeMicros;

	private long replyNanos;

	/** Fixed window: when the window of the last reply ends (local clock). */
	private long windowEndNanos;

	private long lastUsedNanos;

	/** For the slice's size: what was spent since the last take started, and when it started. */
	private long spentSinceTake;

	private long takeStartedNanos;

	private long lastGrant;

	/** Whether a take can push the deadline out (false when it is a fixed window's end, not the lapse bound). */
	private boolean renewable;

	/** The call in flight (a take or a give-back): at most one per slice, so the record is never raced. */
	private @Nullable CompletableFuture<LeaseCall.Reply> inFlight;

	/** Changed by every call sent and applied (unique across slices); 0 before the first. */
	private long mark;

	/** What was spent since the mark: the most that can be put back (a release delivered twice puts back once). */
	private long spentSinceMark;

	/** Set when the slice leaves its map: a request that still holds it looks the key up again. */
	private boolean retired;

	/** The last entry spent from it: the policy (as overrides make it) and identity a give-back names. */
	private Entry entry;

	/** The entry of the last take: the slice's quota is that policy's; null once handed back. */
	private @Nullable Entry takenFor;

	LeasedSlice(Entry entry, long nowNanos) {
		this.entry = entry;
		this.deadlineNanos = nowNanos;
		this.lastUsedNanos = nowNanos;
	}

	/** {@return what may still be spent now: nothing once the slice lapsed} */
	long held(long nowNanos) {
		if (nowNanos - this.deadlineNanos >= 0) {
			this.permits = 0;
		}
		return this.permits;
	}

	Entry entry() {
		return this.entry;
	}

	/** The entry a give-back names: the one the slice was taken for (its policy's limits), else the last spent. */
	Entry givingBackAs() {
		Entry taken = this.takenFor;
		return (taken != null) ? taken : this.entry;
	}

	void takenFor(Entry entry) {
		this.takenFor = entry;
	}

	/** Whether the slice was taken under other limits than the policy's now (a runtime override changed them). */
	boolean takenUnderOther(RateLimitPolicy policy) {
		Entry taken = this.takenFor;
		if (taken == null) {
			return false;
		}
		RateLimitPolicy was = taken.policy();
		return was.algorithm() != policy.algorithm() || was.limit() != policy.limit() || was.burst() != policy.burst()
				|| was.windowMicros() != policy.windowMicros();
	}

	long windowStart() {
		return this.windowStart;
	}

	/** Spends the entry's cost from the slice, or answers null when the slice holds less than it. */
	@Nullable Acquisition spend(Entry entry, long nowNanos) {
		this.lastUsedNanos = nowNanos;
		this.entry = entry;
		if (held(nowNanos) < entry.cost()) {
			return null;
		}
		this.permits -= entry.cost();
		this.spentSinceTake += entry.cost();
		this.spentSinceMark += entry.cost();
		PolicyDecision decision = PolicyDecision.of(entry, true, remaining(entry.policy()),
				resetAfterMicros(entry.policy(), nowNanos), 0);
		return acquisition(decision, nowNanos);
	}

	/** The denial of a request the last take could not serve, with Redis' figures. */
	Acquisition denied(Entry entry, LeaseCall.Reply reply, long nowNanos) {
		PolicyDecision decision = PolicyDecision.of(entry, false, remaining(entry.policy()), reply.resetAfterMicros(),
				reply.retryAfterMicros());
		return acquisition(decision, nowNanos);
	}

	/** What a request of the entry's cost would find now, taking nothing: for a denied request of several entries. */
	PolicyDecision asIs(Entry entry, long nowNanos) {
		held(nowNanos);
		long remaining = remaining(entry.policy());
		return PolicyDecision.of(entry, remaining >= entry.cost(), remaining,
				resetAfterMicros(entry.policy(), nowNanos), 0);
	}

	/** An acquisition whose sequence is the slice's mark: its release may put the cost back ({@link #putBack}). */
	private Acquisition acquisition(PolicyDecision decision, long nowNanos) {
		long time = this.redisTimeMicros + (nowNanos - this.replyNanos) / 1000;
		return new Acquisition(List.of(decision), time, List.of(time), List.of(this.mark));
	}

	/** Marks a call sent or applied: what was spent before it can no longer be put back. */
	void mark(long mark) {
		this.mark = mark;
		this.spentSinceMark = 0;
	}

	/**
	 * Puts a released entry's cost back into the slice if the slice is as it was when the cost was spent (no call
	 * sent or applied since: Redis' record still covers it) and has not lapsed; answers whether it did.
	 */
	boolean putBack(Entry entry, long spentAt, long nowNanos) {
		if (this.retired || spentAt == 0 || spentAt != this.mark || this.spentSinceMark < entry.cost()
				|| !onRecord(nowNanos) || takenUnderOther(entry.policy())) {
			return false;
		}
		this.spentSinceMark -= entry.cost();
		this.permits += entry.cost();
		this.spentSinceTake = Math.max(0, this.spentSinceTake - entry.cost());
		return true;
	}

	/** Remaining: this instance's unspent slice and what Redis had left at the last reply (others' slices not). */
	private long remaining(RateLimitPolicy policy) {
		return Math.min(policy.capacity(), this.permits + this.redisRemaining);
	}

	private long resetAfterMicros(RateLimitPolicy policy, long nowNanos) {
		if (policy.algorithm() == Algorithm.FIXED_WINDOW) {
			return Math.max(0, (this.windowEndNanos - nowNanos) / 1000);
		}
		double missing = policy.capacity() - remaining(policy);
		return (long) Math.ceil(missing * policy.windowMicros() / policy.limit());
	}

	/**
	 * The size of the next take: the largest slice first (a leased key is expected to be busy), then what this
	 * instance spent per second since the last take, for a quarter of the lapse bound, within the bounds.
	 */
	long nextWant(LeaseSettings settings, RateLimitPolicy policy, long need, long nowNanos) {
		long max = settings.maxSliceOf(policy);
		long elapsed = Math.max(1, nowNanos - this.takeStartedNanos);
		double perNano = (double) this.spentSinceTake / elapsed;
		long want = (this.takeStartedNanos == 0) ? max
				: (long) Math.ceil(perNano * settings.lapseAfter().toNanos() / 4);
		this.spentSinceTake = 0;
		this.takeStartedNanos = nowNanos;
		return Math.max(need, Math.min(max, Math.max(1, want)));
	}

	/** Whether to take ahead: the slice is below half the last grant or within a quarter of the bound of lapsing. */
	boolean low(LeaseSettings settings, long nowNanos) {
		if (callInFlight()) {
			return false;
		}
		long quarter = settings.lapseAfter().toNanos() / 4;
		return this.permits * 2 < this.lastGrant || (this.renewable && this.deadlineNanos - nowNanos < quarter);
	}

	/**
	 * Applies a take's reply; a give-back's only refreshes what Redis has left.
	 * @param boundMicros the lapse bound the take asked for (0 for a give-back)
	 */
	void apply(LeaseCall.Reply reply, long boundMicros, long sentNanos, long nowNanos) {
		this.redisRemaining = reply.remaining();
		this.redisTimeMicros = reply.timeMicros();
		this.replyNanos = nowNanos;
		this.windowEndNanos = sentNanos + reply.resetAfterMicros() * 1000;
		if (!reply.take()) {
			return;
		}
		// what is still here of the slice held when the take was sent, if Redis kept it for this instance
		long kept = Math.min(held(nowNanos), reply.kept());
		this.permits = kept + reply.granted();
		if (reply.granted() > 0) {
			this.lastGrant = reply.granted();
			// counted from when the call was sent, so the slice lapses here no later than in Redis
			this.deadlineNanos = sentNanos + reply.lapseAfterMicros() * 1000;
			this.windowStart = reply.windowStart();
			this.renewable = reply.lapseAfterMicros() >= boundMicros;
		}
	}

	/** Hands the whole slice back (it lapses here): the caller sends the give-back of what this answers. */
	long handBack(long nowNanos) {
		long held = held(nowNanos);
		this.permits = 0;
		this.deadlineNanos = nowNanos;
		this.takenFor = null;
		return held;
	}

	/** Whether Redis may still have this slice on record: it has not lapsed (even when all of it was spent). */
	boolean onRecord(long nowNanos) {
		return nowNanos - this.deadlineNanos < 0;
	}

	boolean idle(LeaseSettings settings, long nowNanos) {
		return nowNanos - this.lastUsedNanos >= settings.idleAfter().toNanos();
	}

	boolean callInFlight() {
		CompletableFuture<LeaseCall.Reply> call = this.inFlight;
		return call != null && !call.isDone();
	}

	@Nullable CompletableFuture<LeaseCall.Reply> inFlight() {
		return callInFlight() ? this.inFlight : null;
	}

	void inFlight(CompletableFuture<LeaseCall.Reply> call) {
		this.inFlight = call;
	}

	boolean retired() {
		return this.retired;
	}

	void retire() {
		this.retired = true;
	}

}
