package io.github.ratelimit.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;

/**
 * The peer: bucket4j's Lettuce backend (compare-and-swap: GET the state, then EVAL a CAS script), one shared
 * connection, {@code tryConsume(1)} on a bucket with the same limits and keys that expire when refilled.
 */
final class Bucket4jContender implements Contender {

	private final RedisClient client;

	private final StatefulRedisConnection<byte[], byte[]> connection;

	private final BucketProxy[] buckets = new BucketProxy[Scenario.IDENTITIES];

	private final AsyncBucketProxy[] asyncBuckets = new AsyncBucketProxy[Scenario.IDENTITIES];

	Bucket4jContender(String uri, Scenario scenario) {
		this.client = RedisClient.create(uri);
		this.connection = this.client.connect(ByteArrayCodec.INSTANCE);
		LettuceBasedProxyManager<byte[]> proxyManager = Bucket4jLettuce.casBasedBuilder(this.connection)
			.expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(1)))
			.build();
		Supplier<BucketConfiguration> open = () -> BucketConfiguration.builder()
			.addLimit((limit) -> limit.capacity(Scenario.OPEN_LIMIT).refillGreedy(Scenario.OPEN_LIMIT, Scenario.OPEN_WINDOW))
			.build();
		Supplier<BucketConfiguration> closed = () -> BucketConfiguration.builder()
			.addLimit((limit) -> limit.capacity(Scenario.CLOSED_LIMIT)
				.refillGreedy(Scenario.CLOSED_LIMIT, Scenario.CLOSED_WINDOW))
			.build();
		for (int i = 0; i < Scenario.IDENTITIES; i++) {
			byte[] key = ("b4j:" + scenario.key(i)).getBytes(StandardCharsets.UTF_8);
			Supplier<BucketConfiguration> configuration = scenario.closed(i) ? closed : open;
			this.buckets[i] = proxyManager.builder().build(key, configuration);
			this.asyncBuckets[i] = proxyManager.asAsync()
				.builder()
				.build(key, () -> java.util.concurrent.CompletableFuture.completedFuture(configuration.get()));
			if (scenario.closed(i)) {
				this.buckets[i].tryConsume(1);
			}
		}
	}

	@Override
	public String name() {
		return "bucket4j 8.19 Lettuce";
	}

	/**
	 * bucket4j sends {@code GET} (the state), then, to change it, {@code EVAL} of a compare-and-swap script whose
	 * body runs one more {@code GET} (seen with MONITOR). Client round trips: the GETs, less the one inside each
	 * EVAL, plus the EVALs.
	 */
	@Override
	public long roundTrips(java.util.function.ToLongFunction<String> calls) {
		return calls.applyAsLong("get") - calls.applyAsLong("eval") + calls.applyAsLong("eval")
				+ calls.applyAsLong("evalsha");
	}

	@Override
	public boolean acquire(int identity) {
		return this.buckets[identity].tryConsume(1);
	}

	@Override
	public CompletionStage<Boolean> acquireAsync(int identity) {
		return this.asyncBuckets[identity].tryConsume(1);
	}

	@Override
	public void close() {
		this.connection.close();
		this.client.shutdown();
	}

}
