package io.github.ratelimit.spring;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
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
import org.springframework.data.redis.connection.Message;
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
 * Resets of state are announced on the same channel ({@link #announceReset(String, String)}: a message naming the
 * policy and the identity, which instances of earlier versions take for a change of overrides and ignore), and
 * counted in {@code <prefix>resets}, which every instance reads at the same interval: one that missed a message (an
 * instance starting, a subscription reconnecting) hears of "something was reset" within that interval.
 * <p>
 * A lifecycle bean: it listens while started. Redis being down only delays the overrides: the ones read last stay
 * applied.
 */
public final class RedisOverrideStore implements RateLimitOverrides.Store, SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RedisOverrideStore.class);

	/** Ready at construction, so that nothing slows down a reset between counting and announcing it. */
	private static final ObjectWriter RESET_WRITER = JsonMapper.shared().writerFor(ResetMessage.class);

	private static final ObjectReader RESET_READER = JsonMapper.shared().readerFor(ResetMessage.class);

	/** The longest a start waits for its first attempt to listen. */
	private static final long START_WAIT_MILLIS = 2000;

	private final StringRedisTemplate redis;

	private final RedisConnectionFactory connectionFactory;

	private final String hash;

	private final String channel;

	private final Duration reconcileInterval;

	private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

	private final List<RateLimitOverrides.ResetListener> resetListeners = new CopyOnWriteArrayList<>();

	/** The key counting the resets announced. */
	private final String resets;

	/** Tells this instance's own announcements apart. */
	private final String instance = UUID.randomUUID().toString();

	/** The count of resets this instance has heard of, or -1 before it has read it. */
	private long resetsSeen = -1;

	private volatile @Nullable RedisMessageListenerContainer container;

	/** Runs the listening and the reconciling one after another: Reactor's threads for blocking work, not ours. */
	private Scheduler.@Nullable Worker reconciler;

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
		this.resets = keyPrefix + "resets";
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

	/**
	 * Counts the reset and tells the other instances which policy and identity it was about. A failure (Redis
	 * down, so the reset itself most likely failed too) is logged, never thrown: instances then hear of it, if it
	 * was made, from the count at their next reconcile.
	 */
	@Override
	public void announceReset(@Nullable String policy, @Nullable String identity) {
		try {
			Long count = this.redis.opsForValue().increment(this.resets);
			if (count != null) {
				ownReset(count);
				this.redis.convertAndSend(this.channel,
						RESET_WRITER.writeValueAsString(new ResetMessage(this.instance, count, policy, identity)));
			}
		}
		catch (RuntimeException ex) {
			logger.debug("Could not announce a rate-limit reset; instances notice it at their next reconcile", ex);
		}
	}

	@Override
	public void onReset(RateLimitOverrides.ResetListener listener) {
		this.resetListeners.add(listener);
	}

	private void received(Message message) {
		ResetMessage reset = ResetMessage.parse(new String(message.getBody(), StandardCharsets.UTF_8));
		if (reset == null) {
			changed();
		}
		else if (!reset.instance.equals(this.instance)) {
			othersReset(reset);
		}
	}

	/** This instance's own reset, counted: its listeners heard of it already; a gap is resets missed meanwhile. */
	private void ownReset(long count) {
		boolean missed;
		synchronized (this) {
			missed = this.resetsSeen < 0 || count != this.resetsSeen + 1;
			this.resetsSeen = count;
		}
		if (missed) {
			reset(null, null);
		}
	}

	/**
	 * Another instance's reset: the next one counted, or one overtaken by a later message, is applied as it says;
	 * one after a gap (messages missed) or before the count was first read stands for everything.
	 */
	private void othersReset(ResetMessage message) {
		boolean everything;
		synchronized (this) {
			long seen = this.resetsSeen;
			everything = seen < 0 || message.count > seen + 1;
			if (everything || message.count == seen + 1) {
				this.resetsSeen = message.count;
			}
		}
		if (everything) {
			reset(null, null);
		}
		else {
			reset(message.policy, message.identity);
		}
	}

	/**
	 * Reads the count of resets: a count not heard of means messages were missed, so everything may be reset. A
	 * count read while a message or this instance's own reset moved the count heard of is left to the next
	 * reconcile, since it may be older than what was heard.
	 */
	private void reconcileResets() {
		long before;
		synchronized (this) {
			before = this.resetsSeen;
		}
		long count;
		try {
			String value = this.redis.opsForValue().get(this.resets);
			count = (value != null) ? Long.parseLong(value) : 0;
		}
		catch (RuntimeException ex) {
			logger.debug("Could not read the count of rate-limit resets", ex);
			return;
		}
		boolean missed;
		synchronized (this) {
			missed = this.resetsSeen == before && count != before;
			if (missed) {
				this.resetsSeen = count;
			}
		}
		if (missed) {
			reset(null, null);
		}
	}

	private void reset(@Nullable String policy, @Nullable String identity) {
		for (RateLimitOverrides.ResetListener listener : this.resetListeners) {
			try {
				listener.reset(policy, identity);
			}
			catch (RuntimeException ex) {
				logger.debug("Could not apply a rate-limit reset", ex);
			}
		}
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
	 * Starts listening for changes and reconciling, one after the other on a worker of Reactor's scheduler for
	 * blocking work: the start waits at most
	 * 2 s for the first attempt to listen (and to read the count of resets, so that
	 * nothing decided after the start is forgotten for a reset made before it), never for Redis's own timeouts (a
	 * Redis that accepts connections but answers nothing would hold it for the client's command timeout). Redis
	 * being unreachable fails nothing: listening is tried again at every reconcile until it works, and the overrides
	 * read last stay applied meanwhile.
	 */
	@Override
	public void start() {
		CountDownLatch listening = new CountDownLatch(1);
		synchronized (this) {
			if (this.running) {
				return;
			}
			this.running = true;
			Scheduler.Worker worker = Schedulers.boundedElastic().createWorker();
			long millis = this.reconcileInterval.toMillis();
			worker.schedule(() -> {
				try {
					listen();
				}
				finally {
					listening.countDown();
				}
			});
			worker.schedulePeriodically(this::reconcile, millis, millis, TimeUnit.MILLISECONDS);
			this.reconciler = worker;
		}
		try {
			listening.await(START_WAIT_MILLIS, TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void reconcile() {
		if (this.container == null) {
			listen();
		}
		changed();
		reconcileResets();
	}

	/**
	 * Subscribes to the change channel, on the store's worker only. The subscription is made outside the store's
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
		listening.addMessageListener((message, pattern) -> received(message), new ChannelTopic(this.channel));
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
			return;
		}
		// resets counted from here on are heard of by message; the first count read stands for what came before
		reconcileResets();
	}

	/**
	 * Whether this instance hears changes and resets as they are announced: subscribed to the channel, with the
	 * count of resets read once. Until then (Redis unreachable at start) it learns of them at the reconcile
	 * interval.
	 * @return true while listening
	 */
	public boolean isListening() {
		synchronized (this) {
			return this.container != null && this.resetsSeen >= 0;
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
			this.reconciler.dispose();
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

	/**
	 * A reset as announced on the channel, in JSON: a null policy for every policy, a null identity for every
	 * identity. Any other message ({@code changed}) is a change of overrides.
	 */
	private record ResetMessage(String instance, long count, @Nullable String policy, @Nullable String identity) {

		/** The reset a message announces, or null for any other message (a change of overrides). */
		static @Nullable ResetMessage parse(String message) {
			try {
				return message.startsWith("{") ? RESET_READER.readValue(message) : null;
			}
			catch (JacksonException ex) {
				return null;
			}
		}

	}

}
