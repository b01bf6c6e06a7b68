package io.github.ratelimit.spring;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

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
 * Runtime overrides in Redis, shared by every instance: a hash ({@code <prefix>overrides}, no TTL), changes and
 * resets announced on {@code <prefix>overrides:changed}, resets counted in {@code <prefix>resets}. Every instance
 * also reads both at the reconcile interval, so a missed message costs at most that. A lifecycle bean that listens
 * while started; Redis being down only delays the overrides (architecture, "Runtime overrides").
 */
public final class RedisOverrideStore implements RateLimitOverrides.Store, SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RedisOverrideStore.class);

	/** Made once, so that nothing slows a reset between counting and announcing it. */
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

	private final List<RateLimitOverrides.Listener> resetListeners = new CopyOnWriteArrayList<>();

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
		return this.redis.<String, String>opsForHash().entries(this.hash);
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
	 * Counts the reset and announces its policy and identity. A failure (Redis down, so the reset most likely failed
	 * too) is logged, never thrown: instances hear of a reset made from the count at their next reconcile.
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
	public void onReset(RateLimitOverrides.Listener listener) {
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

	/**
	 * This instance's own reset, counted: its listeners heard of it already; a gap is resets missed meanwhile. A
	 * reconcile that read the count between the increment and this already stood for it (and for the gap).
	 */
	private void ownReset(long count) {
		boolean missed;
		synchronized (this) {
			missed = this.resetsSeen < 0 || count > this.resetsSeen + 1;
			this.resetsSeen = Math.max(this.resetsSeen, count);
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
	 * Reads the count of resets: one not heard of means messages were missed, so everything may be reset. A count
	 * heard of meanwhile (by message) wins: the read may be older.
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
		each(this.resetListeners, (listener) -> listener.stateReset(policy, identity), "a rate-limit reset");
	}

	private void changed() {
		each(this.listeners, Runnable::run, "the rate-limit overrides");
	}

	private static <T> void each(List<T> listeners, Consumer<T> call, String what) {
		for (T listener : listeners) {
			try {
				call.accept(listener);
			}
			catch (RuntimeException ex) {
				logger.debug("Could not apply " + what, ex);
			}
		}
	}

	/**
	 * Starts listening and reconciling on a bounded elastic worker, waiting at most {@value #START_WAIT_MILLIS} ms for
	 * the first attempt to listen (and read the count of resets), never for a frozen Redis's timeouts. Unreachable,
	 * Redis fails nothing: listening is tried again at every reconcile.
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
	 * Subscribes to the channel, on the store's worker, outside the monitor so that a stop never waits for a silent
	 * Redis; a subscription a stop overtook is closed.
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
	 * Whether this instance hears changes and resets as announced (until then, at the reconcile interval).
	 * @return true while subscribed, with the count of resets read once
	 */
	public synchronized boolean isListening() {
		return this.container != null && this.resetsSeen >= 0;
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

	/** A reset announced on the channel, in JSON (null: every policy, every identity); anything else is a change. */
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
