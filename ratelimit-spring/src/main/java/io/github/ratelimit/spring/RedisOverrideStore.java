package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * Runtime overrides in Redis, shared by every instance: one hash ({@code <prefix>overrides}) holds them, and a
 * change is announced on a channel ({@code <prefix>overrides:changed}) that every instance listens to. Since a
 * message can be missed (an instance starting, a subscription reconnecting), every instance also reads the hash
 * again at a fixed interval, so all converge within that interval at the latest. The hash has no TTL: overrides
 * survive restarts until removed.
 * <p>
 * A lifecycle bean: it listens while started. Redis being down only delays the overrides: the ones read last stay
 * applied.
 */
public final class RedisOverrideStore implements RateLimitOverrides.Store, SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RedisOverrideStore.class);

	private final StringRedisTemplate redis;

	private final RedisConnectionFactory connectionFactory;

	private final String hash;

	private final String channel;

	private final Duration reconcileInterval;

	private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

	private volatile @Nullable RedisMessageListenerContainer container;

	private @Nullable ScheduledExecutorService reconciler;

	private volatile boolean running;

	/**
	 * A store.
	 * @param connectionFactory the Redis connection
	 * @param keyPrefix the prefix of the rate limiter's keys
	 * @param reconcileInterval how often every instance reads the overrides again, whatever it was told
	 */
	public RedisOverrideStore(RedisConnectionFactory connectionFactory, String keyPrefix, Duration reconcileInterval) {
		this.connectionFactory = connectionFactory;
		this.redis = new StringRedisTemplate(connectionFactory);
		this.hash = keyPrefix + "overrides";
		this.channel = keyPrefix + "overrides:changed";
		this.reconcileInterval = reconcileInterval;
	}

	@Override
	public Map<String, String> load() {
		Map<String, String> fields = new LinkedHashMap<>();
		this.redis.<String, String>opsForHash().entries(this.hash).forEach(fields::put);
		return fields;
	}

	@Override
	public void put(String field, String value) {
		this.redis.opsForHash().put(this.hash, field, value);
		announce();
	}

	@Override
	public boolean remove(String field) {
		Long removed = this.redis.opsForHash().delete(this.hash, field);
		announce();
		return removed != null && removed > 0;
	}

	private void announce() {
		try {
			this.redis.convertAndSend(this.channel, "changed");
		}
		catch (RuntimeException ex) {
			logger.debug("Could not announce a rate-limit override change; instances reconcile on their own", ex);
		}
	}

	@Override
	public void onChange(Runnable listener) {
		this.listeners.add(listener);
	}

	private void changed() {
		for (Runnable listener : this.listeners) {
			try {
				listener.run();
			}
			catch (RuntimeException ex) {
				logger.debug("Could not apply the rate-limit overrides", ex);
			}
		}
	}

	/**
	 * Starts listening for changes and reconciling, both on the store's own thread: the start never waits for Redis
	 * (a Redis that accepts connections but answers nothing would hold it for the client's command timeout). Redis
	 * being unreachable fails nothing: listening is tried again at every reconcile until it works, and the overrides
	 * read last stay applied meanwhile.
	 */
	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "ratelimit-overrides");
			thread.setDaemon(true);
			return thread;
		});
		long millis = this.reconcileInterval.toMillis();
		scheduler.execute(this::listen);
		scheduler.scheduleWithFixedDelay(this::reconcile, millis, millis, TimeUnit.MILLISECONDS);
		this.reconciler = scheduler;
	}

	private void reconcile() {
		if (this.container == null) {
			listen();
		}
		changed();
	}

	/**
	 * Subscribes to the change channel, on the store's thread only. The subscription is made outside the store's
	 * monitor, so that a stop never waits for a Redis that does not answer; a subscription a stop overtook is closed.
	 */
	private void listen() {
		synchronized (this) {
			if (!this.running || this.container != null) {
				return;
			}
		}
		RedisMessageListenerContainer listening = new RedisMessageListenerContainer();
		listening.setConnectionFactory(this.connectionFactory);
		listening.addMessageListener((message, pattern) -> changed(), new ChannelTopic(this.channel));
		try {
			listening.afterPropertiesSet();
			listening.start();
		}
		catch (RuntimeException ex) {
			logger.debug("Cannot listen for rate-limit override changes yet; reading them every "
					+ this.reconcileInterval.toMillis() + " ms meanwhile", ex);
			destroy(listening);
			return;
		}
		boolean kept;
		synchronized (this) {
			kept = this.running && this.container == null;
			if (kept) {
				this.container = listening;
			}
		}
		if (!kept) {
			destroy(listening);
		}
	}

	private static void destroy(RedisMessageListenerContainer container) {
		try {
			container.destroy();
		}
		catch (Exception ex) {
			logger.debug("Could not stop listening for rate-limit override changes", ex);
		}
	}

	@Override
	public synchronized void stop() {
		this.running = false;
		if (this.reconciler != null) {
			this.reconciler.shutdownNow();
			this.reconciler = null;
		}
		if (this.container != null) {
			destroy(this.container);
			this.container = null;
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

}
