package io.github.ratelimit.core.local;

import java.util.Comparator;
import java.util.TreeSet;

/**
 * The state of one key: the Java form of the Redis value. Which fields are used depends on the algorithm, as the
 * hash fields do in Redis: token bucket {@code a} = tokens, {@code b} = their time; GCRA {@code a} = TAT; windows
 * {@code a} = window number, {@code b} = count, {@code c} = previous count; log and concurrency use {@code log}.
 * Mutated only under the key's lock.
 */
final class State {

	static final Comparator<Stamp> ORDER = Comparator.comparingDouble(Stamp::score).thenComparing(Stamp::member);

	double a;

	double b;

	double c;

	final TreeSet<Stamp> log = new TreeSet<>(ORDER);

	/** How long the key lives after its last write, as its Redis twin's TTL. */
	long ttlMicros;

	record Stamp(double score, String member) {
	}

}
