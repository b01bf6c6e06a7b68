package io.github.ratelimit.benchmarks;

import java.util.List;
import java.util.concurrent.CompletionStage;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * The ceiling: a minimal token-bucket script doing the same work as ours (server time, read two fields, refill,
 * take, write, expire) sent with raw Lettuce EVALSHA on one shared connection, with no framework in between.
 */
final class RawEvalShaContender implements Contender {

	static final String SCRIPT = """
			local t = redis.call('TIME')
			local now = t[1] * 1000000 + t[2]
			local rate = tonumber(ARGV[1])
			local capacity = tonumber(ARGV[2])
			local st = redis.call('HMGET', KEYS[1], 't', 's')
			local tokens = capacity
			if st[1] then
			  tokens = math.min(capacity, tonumber(st[1]) + math.max(0, now - tonumber(st[2])) * rate)
			end
			local allowed = 0
			if tokens >= 1 then
			  tokens = tokens - 1
			  allowed = 1
			  redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 's', string.format('%.17g', now))
			  redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / rate / 1000))
			end
			return {allowed, math.floor(tokens)}
			""";

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private final String sha;

	private final String[][] keys = new String[Scenario.IDENTITIES][];

	private final String[][] args = new String[Scenario.IDENTITIES][];

	RawEvalShaContender(String uri, Scenario scenario) {
		this.client = RedisClient.create(uri);
		this.connection = this.client.connect();
		this.sha = this.connection.sync().scriptLoad(SCRIPT);
		for (int i = 0; i < Scenario.IDENTITIES; i++) {
			boolean closed = scenario.closed(i);
			long limit = closed ? Scenario.CLOSED_LIMIT : Scenario.OPEN_LIMIT;
			double windowMicros = (closed ? Scenario.CLOSED_WINDOW : Scenario.OPEN_WINDOW).toNanos() / 1000.0;
			this.keys[i] = new String[] { "raw:{" + scenario.key(i) + "}" };
			this.args[i] = new String[] { String.format("%.17g", limit / windowMicros), Long.toString(limit) };
			if (closed) {
				acquire(i);
			}
		}
	}

	@Override
	public String name() {
		return "raw EVALSHA (ceiling)";
	}

	@Override
	public boolean acquire(int identity) {
		List<Long> result = this.connection.sync().evalsha(this.sha, ScriptOutputType.MULTI, this.keys[identity],
				this.args[identity]);
		return result.get(0) == 1L;
	}

	@Override
	public CompletionStage<Boolean> acquireAsync(int identity) {
		return this.connection.async()
			.<List<Long>>evalsha(this.sha, ScriptOutputType.MULTI, this.keys[identity], this.args[identity])
			.thenApply((result) -> result.get(0) == 1L);
	}

	@Override
	public void close() {
		this.connection.close();
		this.client.shutdown();
	}

}
