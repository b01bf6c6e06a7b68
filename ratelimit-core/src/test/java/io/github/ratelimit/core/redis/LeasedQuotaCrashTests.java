package io.github.ratelimit.core.redis;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.Wait;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.ratelimit.core.redis.LeaseInstances.drain;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An instance holding a token bucket's whole burst in a slice is killed (SIGKILL, a JVM of its own) and started
 * again: the surviving instance never admits more than refilled since the slice was taken, and nothing of the bucket
 * refills until the dead instance's slice lapses at its bound; then the survivor admits again.
 */
class LeasedQuotaCrashTests {

	private static final long BURST = 100;

	private static final long WINDOW_MILLIS = 2_000;

	private static final long LAPSE_MILLIS = 3_000;

	private final RedisServer server = RedisServers.standalone();

	private final LeaseInstances instances = new LeaseInstances(this.server);

	@AfterEach
	void close() {
		this.instances.close();
	}

	/** The token bucket the test and its second JVM share: burst = limit = 100 per 2 s. */
	static RateLimitPolicy policy(long limit, long windowMillis) {
		return RateLimitPolicy.builder("leased-crash")
			.algorithm(Algorithm.TOKEN_BUCKET)
			.limit(limit)
			.window(Duration.ofMillis(windowMillis))
			.build();
	}

	@Test
	void aKilledInstancesSliceLapsesAtItsBoundAndTheSurvivorNeverExceeds() throws Exception {
		RateLimitPolicy policy = policy(BURST, WINDOW_MILLIS);
		String identity = UUID.randomUUID().toString();
		LeasingBackend survivor = this.instances.start(Map.of(policy.name(),
				new LeaseSettings(10, Duration.ofMillis(LAPSE_MILLIS), Duration.ofMillis(50))));
		long beforeTake = System.nanoTime();
		long admitted = holdAndKill(identity);
		// the dead instance took the whole burst: only what refills after its slice lapsed is there for the survivor
		AtomicLong survivorAdmitted = new AtomicLong();
		Wait.until("the survivor admits once the dead instance's slice lapsed", Duration.ofSeconds(60),
				() -> survivorAdmitted.addAndGet(drain(survivor, policy, identity)) > 0 || sleep());
		survivorAdmitted.addAndGet(drainRepeatedly(survivor, policy, identity));
		admitted += holdAndKill(identity);
		survivorAdmitted.addAndGet(drainRepeatedly(survivor, policy, identity));
		// the restarted instance's slice lapses too: the next call of the survivor drops its record
		String key = survivor.backend().key(policy, identity);
		Wait.until("the killed instances' records lapse", Duration.ofSeconds(60), () -> {
			survivorAdmitted.addAndGet(drain(survivor, policy, identity));
			PackedBucket bucket = PackedBucket.read(this.instances.template(), key);
			return bucket == null || bucket.records()
				.keySet()
				.stream()
				.allMatch((instance) -> instance.equals(survivor.instance()));
		});
		long end = System.nanoTime();
		// the first holder took the whole burst: everything after its one request is what refilled since it lapsed
		assertThat(admitted + survivorAdmitted.get()).isPositive()
			.isLessThanOrEqualTo(1 + refilledAfterLapse(beforeTake, end));
	}

	/**
	 * What refills from a slice's lapse (no earlier than the bound after {@code takenNanos}, which precedes the take)
	 * until {@code endNanos}, rounded up: an upper bound on what anyone but the slice's holder can admit.
	 */
	private static long refilledAfterLapse(long takenNanos, long endNanos) {
		long millis = TimeUnit.NANOSECONDS.toMillis(endNanos - takenNanos) - LAPSE_MILLIS;
		return (millis <= 0) ? 0 : (long) Math.ceil((double) millis * BURST / WINDOW_MILLIS) + 1;
	}

	private static long drainRepeatedly(LeasingBackend backend, RateLimitPolicy policy, String identity) {
		long total = 0;
		for (int i = 0; i < 10; i++) {
			total += drain(backend, policy, identity);
			sleep();
		}
		return total;
	}

	private static boolean sleep() {
		try {
			Thread.sleep(100);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		return false;
	}

	/** Starts a JVM that takes a slice with one request, and kills it (SIGKILL) once it did: 1 if it admitted. */
	private long holdAndKill(String identity) throws IOException, InterruptedException {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		Process process = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
				LeaseHolderMain.class.getName(), String.valueOf(this.server.port()), identity, String.valueOf(BURST),
				String.valueOf(WINDOW_MILLIS), String.valueOf(LAPSE_MILLIS))
			.redirectErrorStream(true)
			.start();
		try (BufferedReader out = new BufferedReader(
				new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = out.readLine()) != null && !line.startsWith("ADMITTED ")) {
				// the JVM's own output
			}
			assertThat(line).as("the holder's report").isNotNull();
			process.destroyForcibly().waitFor();
			return line.equals("ADMITTED true") ? 1 : 0;
		}
	}

}
