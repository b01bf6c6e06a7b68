package io.github.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend.Acquisition;
import io.github.ratelimit.core.RateLimitRequest.Entry;
import org.jspecify.annotations.Nullable;

/**
 * Reads the replies of the script, as described at the top of {@code scripts/ratelimit.lua}; keep the two in step.
 * An acquire returns the time it used (microseconds), then seven figures per entry, in the order of the call's KEYS
 * (see {@link ScriptCall}): admits (1 or 0), remaining and reset-after (microseconds) once the cost is taken,
 * remaining and reset-after as the state is, retry-after (microseconds), and the first sequence number the entry
 * took (the sorted sets' members, which its release names; 0 for none). Every entry of a call is checked against
 * the state before the request, and only when all of them admit does any take its cost. On Cluster a request can
 * span several calls, so only the caller knows whether the whole request was admitted: then the "taken" figures
 * apply, otherwise the "as is" figures (nothing was taken, or it is given back).
 */
final class ScriptReply {

	/** Figures per entry. */
	private static final int FIGURES = 7;

	/** Offsets of an entry's figures: admits, then remaining and reset-after taken, as is, then retry-after. */
	private static final int ADMITS = 0;

	private static final int TAKEN = 1;

	private static final int AS_IS = 3;

	private static final int RETRY_AFTER = 5;

	private static final int SEQUENCE = 6;

	private ScriptReply() {
	}

	/**
	 * The reply's numbers.
	 * @param result the reply as the template returned it
	 * @return the reply, empty for none
	 */
	static List<Long> toLongs(@Nullable List<?> result) {
		List<Long> values = new ArrayList<>();
		if (result != null) {
			for (Object value : result) {
				values.add((value instanceof Number number) ? number.longValue() : Long.parseLong(value.toString()));
			}
		}
		return values;
	}

	/**
	 * The time an acquire used, which its release passes back.
	 * @param reply an acquire's reply
	 * @return the time in microseconds
	 */
	static long timeMicros(List<Long> reply) {
		return reply.get(0);
	}

	/**
	 * The first sequence number each entry of one call took, which a give-back of the call passes back.
	 * @param reply an acquire's reply
	 * @return one number per entry, in the order of the call's KEYS (0 for none)
	 */
	static List<Long> sequences(List<Long> reply) {
		List<Long> sequences = new ArrayList<>((reply.size() - 1) / FIGURES);
		for (int i = 1 + SEQUENCE; i < reply.size(); i += FIGURES) {
			sequences.add(reply.get(i));
		}
		return sequences;
	}

	/**
	 * Whether every entry of one call admitted (and so took its cost).
	 * @param reply an acquire's reply
	 * @return true when all admitted
	 */
	static boolean admits(List<Long> reply) {
		for (int i = 1 + ADMITS; i < reply.size(); i += FIGURES) {
			if (reply.get(i) != 1L) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Whether every entry of every call admitted: the request is admitted.
	 * @param replies the replies of the request's calls
	 * @return true when all admitted
	 */
	static boolean allAdmit(List<List<Long>> replies) {
		for (List<Long> reply : replies) {
			if (!admits(reply)) {
				return false;
			}
		}
		return true;
	}

	/**
	 * When any call denied, the calls whose entries all admitted (and so took their cost, to give back).
	 * @param replies the replies of the request's calls
	 * @return their indexes, empty when the request was admitted or is one call
	 */
	static List<Integer> refundsNeeded(List<List<Long>> replies) {
		if (replies.size() < 2 || allAdmit(replies)) {
			return List.of();
		}
		List<Integer> admitted = new ArrayList<>();
		for (int i = 0; i < replies.size(); i++) {
			if (admits(replies.get(i))) {
				admitted.add(i);
			}
		}
		return admitted;
	}

	/**
	 * The request's decisions: admitted only when every entry of every call admits, with the "taken" figures then
	 * and the "as is" figures otherwise.
	 * @param entries the request's entries
	 * @param calls its calls, one per hash slot
	 * @param replies their replies, in the same order
	 * @return one decision per entry, and the time each entry was decided at
	 */
	static Acquisition acquisition(List<Entry> entries, List<ScriptCall> calls, List<List<Long>> replies) {
		return decisions(entries, calls, replies, allAdmit(replies) ? TAKEN : AS_IS);
	}

	/**
	 * The state of each entry as it stands (an inspection took nothing): the "as is" figures, and whether each entry
	 * on its own would admit.
	 * @param entries the request's entries
	 * @param calls its calls, one per hash slot
	 * @param replies their replies, in the same order
	 * @return one decision per entry
	 */
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
		return new Acquisition(List.of(decisions), timeMicros(replies.get(0)), List.of(times), List.of(sequences));
	}

}
