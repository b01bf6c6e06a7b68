package io.github.ratelimit.core.local;

import java.util.Iterator;
import java.util.Objects;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.local.State.Stamp;
import org.jspecify.annotations.Nullable;

/**
 * The Java twins of {@code scripts/*.lua}: {@code check} reads, {@code commit} takes the cost, {@code refund} gives
 * back; a missing state is a fresh key. Every expression is written in the same order as in Lua, so the double
 * arithmetic gives the same bits and both backends the same decisions (the conformance suite checks it).
 */
enum LocalAlgorithm {

	/** token-bucket.lua: a = tokens, b = their time, refundedAt = the acquire time refunded last (q). */
	TOKEN_BUCKET {

		private static double fillTime(Eval c, double tokens) {
			return Math.ceil((c.burst - tokens) * c.window / c.limit);
		}

		@Override
		void check(Eval c, @Nullable State state) {
			double tokens = c.burst;
			c.at = c.now;
			if (state != null) {
				tokens = Math.min(c.burst, state.a);
				double elapsed = c.now - state.b;
				if (elapsed > 0) {
					tokens = Math.min(c.burst, tokens + elapsed * c.limit / c.window);
				}
				else {
					c.at = state.b;
				}
			}
			double ahead = c.at - c.now;
			double t = tol(c.burst);
			c.rb = Math.floor(tokens + t);
			c.zb = fillTime(c, tokens);
			if (c.zb > 0) {
				c.zb = c.zb + ahead;
			}
			if (tokens + t >= c.cost) {
				c.ok = true;
				c.next = Math.max(0, tokens - c.cost);
				c.ra = Math.floor(c.next + t);
				c.za = fillTime(c, c.next) + ahead;
			}
			else {
				c.ok = false;
				c.retry = Math.ceil((c.cost - tokens) * c.window / c.limit) + ahead;
			}
		}

		@Override
		State commit(Eval c, @Nullable State state) {
			State next = (state != null) ? state : new State();
			next.a = c.next;
			next.b = c.at;
			next.ttlMicros = ttlMicros(c, c.za);
			return next;
		}

		@Override
		void refund(Eval c, State state) {
			if (state.b == c.now && state.refundedAt != c.now) {
				state.a = Math.min(c.burst, state.a + c.cost);
				state.refundedAt = c.now;
			}
		}

	},

	/** gcra.lua: a = time written (s), b = backlog (d), length = interval (i), refundedAt = a once refunded (q). */
	GCRA {

		@Override
		void check(Eval c, @Nullable State state) {
			double interval = c.window / c.limit;
			double tolerance = interval * c.burst;
			double t = tol(c.burst);
			double backlog = 0;
			if (state != null) {
				double d = state.b;
				if (state.length != interval) {
					d = d / state.length * interval;
				}
				if (d > tolerance + interval * t) {
					d = tolerance;
				}
				backlog = Math.max(0, d - (c.now - state.a));
			}
			c.rb = Math.max(0, Math.floor((tolerance - backlog) / interval + t));
			c.zb = Math.ceil(backlog);
			double newBacklog = backlog + interval * c.cost;
			double left = (tolerance - newBacklog) / interval;
			if (left + t >= 0) {
				c.ok = true;
				c.next = newBacklog;
				c.ra = Math.floor(left + t);
				c.za = Math.ceil(newBacklog);
			}
			else {
				c.ok = false;
				c.retry = Math.ceil(newBacklog - tolerance);
			}
		}

		@Override
		State commit(Eval c, @Nullable State state) {
			State next = (state != null) ? state : new State();
			next.a = c.now;
			next.b = c.next;
			next.length = c.window / c.limit;
			next.refundedAt = Double.NaN;
			next.ttlMicros = ttlMicros(c, c.za);
			return next;
		}

		@Override
		void refund(Eval c, State state) {
			if (state.a == c.now && state.refundedAt != c.now) {
				state.b = state.b - state.length * c.cost;
				state.refundedAt = c.now;
			}
		}

	},

	/** zset_check, zset_commit and zset_refund of sorted-set.lua: the algorithms that keep entries. */
	TIMESTAMP_SET {

		@Override
		void check(Eval c, @Nullable State state) {
			if (state != null) {
				double expired = c.now - c.window;
				Iterator<Stamp> stamps = state.log.iterator();
				while (stamps.hasNext() && stamps.next().score() <= expired) {
					stamps.remove();
				}
			}
			int count = (state != null) ? state.log.size() : 0;
			c.rb = Math.max(0, c.limit - count);
			c.ra = c.limit - count - c.cost;
			c.za = c.window;
			c.zb = 0;
			Double newest = null;
			if (state != null && count > 0) {
				newest = state.log.last().score();
				c.zb = newest + c.window - c.now;
				c.za = Math.max(c.za, c.zb);
			}
			double over = count + c.cost - c.limit;
			if (c.min > 0 && newest != null && c.now - newest < c.min) {
				c.ok = false;
				c.retry = newest + c.min - c.now;
				if (over > 0) {
					c.retry = Math.max(c.retry, scoreAt(state, (int) over - 1) + c.window - c.now);
				}
			}
			else if (over <= 0) {
				c.ok = true;
			}
			else {
				c.ok = false;
				c.retry = scoreAt(state, (int) over - 1) + c.window - c.now;
			}
		}

		private static double scoreAt(@Nullable State state, int index) {
			Iterator<Stamp> stamps = Objects.requireNonNull(state).log.iterator();
			for (int i = 0; i < index; i++) {
				stamps.next();
			}
			return stamps.next().score();
		}

		/** Numbers the cost's entries from the key's sequence, as zset_commit's ZINCRBY does. */
		@Override
		State commit(Eval c, @Nullable State state) {
			State next = (state != null) ? state : new State();
			c.seq = next.sequence + 1;
			next.sequence += (long) c.cost;
			for (long i = 0; i < c.cost; i++) {
				next.log.add(new Stamp(c.now, c.seq + i));
			}
			next.ttlMicros = ttlMicros(c, c.za);
			return next;
		}

		@Override
		void refund(Eval c, State state) {
			// the members were scored with the time of the acquisition, which the release passes: a member of
			// another request (another key's life, after a reset) is never removed
			for (long i = 0; c.seq > 0 && i < c.cost; i++) {
				state.log.remove(new Stamp(c.now, c.seq + i));
			}
		}

	},

	/** sliding-window-counter.lua: a = window number, b = its count, c = previous count, length = window length. */
	SLIDING_WINDOW_COUNTER {

		private static double reset(Eval c, double currentCount, double previousCount) {
			if (currentCount > 0) {
				return 2 * c.window - c.elapsed;
			}
			else if (previousCount > 0) {
				return c.window - c.elapsed;
			}
			return 0;
		}

		@Override
		void check(Eval c, @Nullable State state) {
			double current = Math.floor(c.now / c.window);
			c.elapsed = c.now - current * c.window;
			double ahead = 0;
			double count = 0;
			double previous = 0;
			if (state != null) {
				double w = state.a;
				if (state.length != c.window) {
					count = rewriteForWindow(c, state, current);
				}
				else if (w > current) {
					count = state.b;
					previous = state.c;
					ahead = w * c.window - c.now;
					current = w;
					c.elapsed = 0;
				}
				else if (w == current) {
					count = state.b;
					previous = state.c;
				}
				else if (w == current - 1) {
					previous = state.b;
				}
			}
			c.current = current;
			c.count = count;
			c.previous = previous;
			c.ahead = ahead;
			double estimate = previous * ((c.window - c.elapsed) / c.window) + count;
			double t = tol(c.limit);
			c.rb = Math.max(0, Math.floor(c.limit - estimate + t));
			c.zb = reset(c, count, previous);
			if (c.zb > 0) {
				c.zb = c.zb + ahead;
			}
			if (estimate + c.cost <= c.limit + t) {
				c.ok = true;
				c.ra = Math.max(0, Math.floor(c.limit - estimate - c.cost + t));
				c.za = reset(c, count + c.cost, previous) + ahead;
			}
			else {
				c.ok = false;
				c.retry = retry(c, count, previous, c.cost);
			}
		}

		/** The stored counts that may hold requests of the last window, rewritten as the current window's. */
		private static double rewriteForWindow(Eval c, State state, double current) {
			double count = 0;
			if ((state.a + 1) * state.length > c.now - c.window) {
				count = count + state.b;
			}
			if (state.a * state.length > c.now - c.window) {
				count = count + state.c;
			}
			if (count > 0) {
				state.a = current;
				state.length = c.window;
				state.b = count;
				state.c = 0;
				state.ttlMicros = ttlMicros(c, 2 * c.window - c.elapsed);
				c.rewritten = true;
			}
			return count;
		}

		/** sc_retry: the wait of a denied request of that cost, at {@code c.elapsed} into the window. */
		private static double retry(Eval c, double count, double previous, double cost) {
			double retry;
			double room = c.limit - count - cost;
			if (room >= 0 && previous > 0) {
				retry = Math.ceil(c.window * (previous - room) / previous) - c.elapsed;
			}
			else {
				double nextRoom = c.limit - cost;
				retry = c.window - c.elapsed;
				if (count > nextRoom) {
					retry = retry + Math.ceil(c.window * (count - nextRoom) / count);
				}
			}
			return retry + c.ahead;
		}

		@Override
		State commit(Eval c, @Nullable State state) {
			State next = (state != null) ? state : new State();
			next.a = c.current;
			next.length = c.window;
			next.b = c.count + c.cost;
			next.c = c.previous;
			next.ttlMicros = ttlMicros(c, 2 * c.window - c.elapsed + c.ahead);
			return next;
		}

		@Override
		void refund(Eval c, State state) {
			if (state.length != c.window) {
				return;
			}
			double countedIn = Math.floor(c.now / c.window);
			if (state.a == countedIn) {
				if (!state.refundedBefore(c.rid)) {
					state.b = Math.max(0, state.b - c.cost);
				}
			}
			else if (state.a == countedIn + 1) {
				if (!state.refundedBefore(c.rid)) {
					state.c = Math.max(0, state.c - c.cost);
				}
			}
		}

	},

	/** fixed-window.lua: a = window number, b = count, length = window length. */
	FIXED_WINDOW {

		@Override
		void check(Eval c, @Nullable State state) {
			double k = Math.floor(c.now / c.window);
			double current = k;
			double length = c.window;
			double count = 0;
			if (state != null) {
				double w = state.a;
				double l = state.length;
				double from = w * l;
				double to = (w + 1) * l;
				if (from >= (k + 1) * c.window) {
					current = w;
					length = l;
					count = state.b;
				}
				else if (to > k * c.window) {
					count = state.b;
					if (l != c.window) {
						state.a = k;
						state.length = c.window;
						state.ttlMicros = ttlMicros(c, (k + 1) * c.window - c.now);
						c.rewritten = true;
					}
				}
			}
			double windowEnd = (current + 1) * length - c.now;
			c.current = current;
			c.length = length;
			c.count = count;
			c.rb = Math.max(0, c.limit - count);
			c.zb = (count > 0) ? windowEnd : 0;
			c.za = windowEnd;
			if (count + c.cost <= c.limit) {
				c.ok = true;
				c.ra = c.limit - count - c.cost;
			}
			else {
				c.ok = false;
				c.retry = windowEnd;
			}
		}

		@Override
		State commit(Eval c, @Nullable State state) {
			State next = (state != null) ? state : new State();
			next.a = c.current;
			next.length = c.length;
			next.b = c.count + c.cost;
			next.ttlMicros = ttlMicros(c, c.za);
			return next;
		}

		@Override
		void refund(Eval c, State state) {
			if (state.a == Math.floor(c.now / c.window) && state.length == c.window && !state.refundedBefore(c.rid)) {
				state.b = Math.max(0, state.b - c.cost);
			}
		}

	};

	static final double EPS = 1e-12;

	/** A TTL floor under explicit time, as in the scripts. */
	static final long EXPLICIT_TTL_FLOOR_MS = 600_000;

	/** The twin of an algorithm: those that keep entries share sorted-set.lua, and so one twin. */
	static LocalAlgorithm of(Algorithm algorithm) {
		return switch (algorithm) {
			case TOKEN_BUCKET -> TOKEN_BUCKET;
			case GCRA -> GCRA;
			case SLIDING_WINDOW_LOG, CONCURRENCY -> TIMESTAMP_SET;
			case SLIDING_WINDOW_COUNTER -> SLIDING_WINDOW_COUNTER;
			case FIXED_WINDOW -> FIXED_WINDOW;
		};
	}

	/** Evaluates the entry (results set on it); may drop expired parts of the state, nothing a decision depends on. */
	abstract void check(Eval c, @Nullable State state);

	/** Takes the cost; returns the new state, with its TTL set. */
	abstract State commit(Eval c, @Nullable State state);

	/** Gives back what request {@code c.rid} took (the sorted sets: the members from {@code c.seq}). */
	abstract void refund(Eval c, State state);

	/** The tolerance for a quantity of magnitude up to {@code magnitude}: {@code tol()} in common.lua. */
	static double tol(double magnitude) {
		return EPS * Math.max(1, magnitude);
	}

	/** The TTL in microseconds of a key that holds state for {@code micros}: {@code pexpire()} in common.lua. */
	static long ttlMicros(Eval c, double micros) {
		double ms = Math.ceil(micros / 1000);
		if (ms < 1) {
			ms = 1;
		}
		if (c.explicitTime && ms < EXPLICIT_TTL_FLOOR_MS) {
			ms = EXPLICIT_TTL_FLOOR_MS;
		}
		return (long) ms * 1000L;
	}

}
