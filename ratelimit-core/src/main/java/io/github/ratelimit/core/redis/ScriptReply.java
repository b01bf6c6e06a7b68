package io.github.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend.Acquisition;
import io.github.ratelimit.core.RateLimitRequest.Entry;
import org.jspecify.annotations.Nullable;

/**
 * Reads the driver's replies, in the layout at the top of {@code scripts/ratelimit.lua} (keep the two in step): the
 * time, then seven figures per entry, "taken" when every call of the request admitted, else "as is".
 */
final class ScriptReply {

	private static final int FIGURES = 7;

	/** Offsets of an entry's figures: admits, remaining and reset-after taken, as is, retry-after, sequence. */
	private static final int ADMITS = 0;

	private static final int TAKEN = 1;

	private static final int AS_IS = 3;

	private static final int RETRY_AFTER = 5;

	private static final int SEQUENCE = 6;

	private ScriptReply() {
	}

	/** The reply's numbers, empty for none. */
	static List<Long> toLongs(@Nullable List<?> result) {
		if (result == null) {
			return List.of();
		}
		List<Long> values = new ArrayList<>(result.size());
		for (Object value : result) {
			values.add((value instanceof Number number) ? number.longValue() : Long.parseLong(value.toString()));
		}
		return values;
	}

	/** The first sequence number each entry of one call took (0 for none), which its give-back passes back. */
	static List<Long> sequences(List<Long> reply) {
		List<Long> sequences = new ArrayList<>((reply.size() - 1) / FIGURES);
		for (int i = 1 + SEQUENCE; i < reply.size(); i += FIGURES) {
			sequences.add(reply.get(i));
		}
		return sequences;
	}

	/** Whether every entry of one call admitted (and so took its cost). */
	static boolean admits(List<Long> reply) {
		for (int i = 1 + ADMITS; i < reply.size(); i += FIGURES) {
			if (reply.get(i) != 1L) {
				return false;
			}
		}
		return true;
	}

	/** Whether every entry of every call admitted: the request is admitted. */
	static boolean allAdmit(List<List<Long>> replies) {
		for (List<Long> reply : replies) {
			if (!admits(reply)) {
				return false;
			}
		}
		return true;
	}

	/** The request's decisions (one per entry, with the time each was decided at) from its calls' replies. */
	static Acquisition acquisition(List<Entry> entries, List<ScriptCall> calls, List<List<Long>> replies) {
		return decisions(entries, calls, replies, allAdmit(replies) ? TAKEN : AS_IS);
	}

	/** An inspection's decisions: the "as is" figures, and whether each entry on its own would admit. */
	static List<PolicyDecision> inspection(List<Entry> entries, List<ScriptCall> calls, List<List<Long>> replies) {
		return decisions(entries, calls, replies, AS_IS).decisions();
	}

	private static Acquisition decisions(List<Entry> entries, List<ScriptCall> calls, List<List<Long>> replies,
			int figures) {
		PolicyDecision[] decisions = new PolicyDecision[entries.size()];
		Long[] times = new Long[entries.size()];
		Long[] sequences = new Long[entries.size()];
		for (int c = 0; c < calls.size(); c++) {
			List<Integer> indexes = calls.get(c).indexes();
			List<Long> reply = replies.get(c);
			for (int j = 0; j < indexes.size(); j++) {
				int at = 1 + j * FIGURES;
				int index = indexes.get(j);
				decisions[index] = PolicyDecision.of(entries.get(index), reply.get(at + ADMITS) == 1L,
						reply.get(at + figures), reply.get(at + figures + 1), reply.get(at + RETRY_AFTER));
				times[index] = reply.get(0);
				sequences[index] = reply.get(at + SEQUENCE);
			}
		}
		return new Acquisition(List.of(decisions), replies.get(0).get(0), List.of(times), List.of(sequences));
	}

}
