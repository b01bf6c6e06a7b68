package io.github.ratelimit.core.local;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

/** One key's state, the form of its Redis value (each {@link LocalAlgorithm} says its fields); under the key's lock. */
final class State {

	/** How many refunded request ids a window keeps: REFUNDS_KEPT in common.lua. */
	static final int REFUNDS_KEPT = 8;

	static final Comparator<Stamp> ORDER = Comparator.comparingDouble(Stamp::score).thenComparingLong(Stamp::member);

	double a;

	double b;

	double c;

	/** The window length (or GCRA's interval) the state was written with. */
	double length;

	/** The acquire time of the token bucket's or GCRA's last refund (NaN for none), so that one is refunded once. */
	double refundedAt = Double.NaN;

	/** The last few requests refunded from a window (field u of the scripts), newest first. */
	private @Nullable ArrayDeque<String> refunds;

	final TreeSet<Stamp> log = new TreeSet<>(ORDER);

	/** The last sequence number the log's members were given (the member {@code #} of sorted-set.lua). */
	long sequence;

	/** How long the key lives after its last write, as its Redis twin's TTL. */
	long ttlMicros;

	/** Records a window's refund of {@code rid}, true if it was refunded before: refunded_before() in common.lua. */
	boolean refundedBefore(String rid) {
		if (rid.isEmpty()) {
			return false;
		}
		ArrayDeque<String> refunds = this.refunds;
		if (refunds == null) {
			refunds = new ArrayDeque<>(REFUNDS_KEPT);
			this.refunds = refunds;
		}
		else if (refunds.contains(rid)) {
			return true;
		}
		if (refunds.size() >= REFUNDS_KEPT) {
			refunds.removeLast();
		}
		refunds.addFirst(rid);
		return false;
	}

	record Stamp(double score, long member) {
	}

}
