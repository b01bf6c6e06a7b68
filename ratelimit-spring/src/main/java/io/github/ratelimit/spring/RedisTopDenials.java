package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Every instance's {@link TopDenials} combined through Redis: each instance publishes its summary of a policy every
 * {@code interval}, off the request path, as a field (its instance id) of the hash {@code <prefix>top:{<policy>}},
 * stamped with Redis's clock in the sorted set {@code <prefix>top:{<policy>}:at} (same Cluster slot); a field older
 * than three intervals is stale (a gone instance's share lapses), dropped by the next publisher, and both keys
 * expire when nobody publishes. Reading combines the fresh fields of the other instances with this instance's own
 * summary. Every call waits at most {@code timeout}; Redis being down or slow leaves this instance's own summary.
 */
public final class RedisTopDenials implements TopDenialsSource, SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RedisTopDenials.class);

	private static final ObjectWriter WRITER = JsonMapper.shared().writerFor(TopDenials.Summary.class);

	private static final ObjectReader READER = JsonMapper.shared().readerFor(TopDenials.Summary.class);

	/** Redis's clock in ms, for the scripts: no instance clock is compared. */
	private static final String NOW = """
			local t = redis.call('TIME')
			local now = t[1] * 1000 + math.floor(t[2] / 1000)
			""";

	/** Stores a field and its time, drops the stale ones (found by time, not by reading every field), keeps both alive. */
	private static final RedisScript<Long> PUBLISH = RedisScript.of(NOW + """
			local ttl = tonumber(ARGV[3])
			local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. (now - ttl))
			for i = 1, #stale do redis.call('HDEL', KEYS[1], stale[i]) end
			redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. (now - ttl))
			redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
			redis.call('ZADD', KEYS[2], now, ARGV[1])
			redis.call('PEXPIRE', KEYS[1], ttl)
			redis.call('PEXPIRE', KEYS[2], ttl)
			return 1
			""", Long.class);

	/** The fresh summaries other than the caller's. */
	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> READ = RedisScript.of(NOW + """
			local fresh = {}
			for _, field in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], now - tonumber(ARGV[2]), '+inf')) do
			  local summary = redis.call('HGET', KEYS[1], field)
			  if field ~= ARGV[1] and summary then table.insert(fresh, summary) end
			end
			return fresh
			""", List.class);

	/** Takes a field back. */
	private static final RedisScript<Long> TAKE_BACK = RedisScript.of("""
			redis.call('ZREM', KEYS[2], ARGV[1])
			return redis.call('HDEL', KEYS[1], ARGV[1])
			""", Long.class);

	private final RedisCalls redis;

	private final String prefix;

	private final TopDenials local;

	private final int capacity;

	private final Duration interval;

	private final String instance = UUID.randomUUID().toString();

	/** Policies this instance has a field for, so that a summary emptied by time or a reset is taken back. */
	private final Set<String> published = ConcurrentHashMap.newKeySet();

	private Scheduler.@Nullable Worker worker;

	private volatile boolean running;

	/** Calls waiting at most one {@code interval}: a publish ends before the next one is due. */
	public RedisTopDenials(RedisConnectionFactory connectionFactory, String keyPrefix, TopDenials local, int capacity,
			Duration interval) {
		this(connectionFactory, keyPrefix, local, capacity, interval, interval);
	}

	/**
	 * @param keyPrefix the rate limiter's key prefix
	 * @param local this instance's summaries
	 * @param capacity the most identities a combined summary keeps
	 * @param interval how often this instance publishes
	 * @param timeout the longest a read or publish waits for Redis (a Lettuce factory; other clients wait their own
	 * command timeout)
	 */
	public RedisTopDenials(RedisConnectionFactory connectionFactory, String keyPrefix, TopDenials local, int capacity,
			Duration interval, Duration timeout) {
		this.redis = new RedisCalls(connectionFactory, timeout);
		this.prefix = keyPrefix + "top:";
		this.local = local;
		this.capacity = capacity;
		this.interval = interval;
	}

	/** The policy's hash and sorted set of times, hash-tagged to one Cluster slot. */
	private List<String> keys(String policy) {
		String hash = this.prefix + "{" + policy + "}";
		return List.of(hash, hash + ":at");
	}

	/** {@return how long a published summary counts: three intervals} */
	private long ttlMillis() {
		return Math.max(1, this.interval.toMillis() * 3);
	}

	@Override
	public TopDenials.Summary summary(String policy) {
		List<TopDenials.Summary> summaries = new ArrayList<>();
		summaries.add(this.local.summary(policy));
		try {
			for (Object each : this.redis.list(READ, keys(policy), this.instance, Long.toString(ttlMillis()))) {
				TopDenials.Summary summary = parse(String.valueOf(each));
				if (summary != null) {
					summaries.add(summary);
				}
			}
		}
		catch (RuntimeException ex) {
			logger.debug("Could not read the other instances' rate-limit denials; answering with this instance's", ex);
		}
		return TopDenials.Summary.merge(summaries, this.capacity);
	}

	@Override
	public Set<String> policies() {
		return this.local.policies();
	}

	/** Publishes every policy's summary now (an emptied one is taken back); failures are logged, never thrown. */
	public void publish() {
		for (String policy : this.local.policies()) {
			TopDenials.Summary summary = this.local.summary(policy);
			if (summary.denials() > 0 || !summary.identities().isEmpty()) {
				try {
					this.redis.run(PUBLISH, keys(policy), this.instance, WRITER.writeValueAsString(summary),
							Long.toString(ttlMillis()));
					this.published.add(policy);
				}
				catch (RuntimeException ex) {
					logger.debug("Could not publish this instance's rate-limit denials of policy '" + policy + "'", ex);
				}
			}
			else if (this.published.remove(policy)) {
				takeBack(policy);
			}
		}
		// a policy forgotten whole by a reset is no longer among the local ones
		for (String policy : this.published) {
			if (!this.local.policies().contains(policy) && this.published.remove(policy)) {
				takeBack(policy);
			}
		}
	}

	private void takeBack(String policy) {
		try {
			this.redis.run(TAKE_BACK, keys(policy), this.instance);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not take back this instance's rate-limit denials of policy '" + policy + "'", ex);
		}
	}

	/** Publishes every interval, and at once after a reset, on a worker of Reactor's {@code boundedElastic}. */
	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		Scheduler.Worker publisher = Schedulers.boundedElastic().createWorker();
		long millis = this.interval.toMillis();
		publisher.schedulePeriodically(this::publish, millis, millis, TimeUnit.MILLISECONDS);
		this.local.onReset(() -> publisher.schedule(this::publish));
		this.worker = publisher;
	}

	@Override
	public synchronized void stop() {
		this.running = false;
		this.local.onReset(() -> {
		});
		if (this.worker != null) {
			this.worker.dispose();
			this.worker = null;
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/** Stops before the connection factory (phase 0) and starts after it. */
	@Override
	public int getPhase() {
		return SmartLifecycle.DEFAULT_PHASE / 2;
	}

	/** Reads a published summary; unreadable ones (another version's) are skipped. */
	static TopDenials.@Nullable Summary parse(String published) {
		try {
			return READER.readValue(published);
		}
		catch (JacksonException ex) {
			return null;
		}
	}

}
