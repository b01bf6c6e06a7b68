package io.github.ratelimit.core.redis;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Map;

import io.github.ratelimit.core.RateLimitPolicy;

/**
 * An instance in a JVM of its own, for {@link LeasedQuotaCrashTests}: takes a slice of a token bucket's quota with one
 * admitted request, says so on standard output, and holds the slice until it is killed (or its parent goes away).
 * Arguments: Redis port, identity, limit = burst, window (ms), lapse bound (ms).
 */
public final class LeaseHolderMain {

	private LeaseHolderMain() {
	}

	public static void main(String[] args) throws IOException {
		RateLimitPolicy policy = LeasedQuotaCrashTests.policy(Long.parseLong(args[2]), Long.parseLong(args[3]));
		LeaseSettings settings = new LeaseSettings(policy.capacity(), Duration.ofMillis(Long.parseLong(args[4])),
				Duration.ofMillis(Long.parseLong(args[4])));
		LeaseInstances instances = new LeaseInstances("127.0.0.1", Integer.parseInt(args[0]));
		LeasingBackend backend = instances.start(Map.of(policy.name(), settings));
		boolean admitted = admitted(backend, policy, args[1]);
		System.out.println("ADMITTED " + admitted);
		System.out.flush();
		// held until killed; exits when the test's JVM closes the pipe
		InputStream in = System.in;
		while (in.read() >= 0) {
			// nothing to read
		}
		System.exit(0);
	}

	/** The first request, tried again while it fails (a cold JVM on a loaded machine may connect slowly). */
	private static boolean admitted(LeasingBackend backend, RateLimitPolicy policy, String identity) {
		for (int attempt = 1;; attempt++) {
			try {
				return LeaseInstances.admits(backend, policy, identity);
			}
			catch (RuntimeException ex) {
				if (attempt == 20) {
					throw ex;
				}
			}
		}
	}

}
