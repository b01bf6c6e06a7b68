package io.github.ratelimit.spring;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
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
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.SubscriptionListener;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * Runtime overrides in Redis, shared by every instance: a hash ({@code <prefix>overrides}), changes and resets
 * announced on {@code <prefix>overrides:changed}, resets counted in {@code <prefix>resets}, both read again at the
 * reconcile interval. A lifecycle bean that listens while started; Redis being down only delays the overrides.
 */
public final class RedisOverrideStore implements RateLimitOverrides.Store, SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RedisOverrideStore.class);

	private static final ObjectWriter RESET_WRITER = JsonMapper.shared().writerFor(ResetMessage.class);

	private static final ObjectReader RESET_READER = JsonMapper.shared().readerFor(ResetMessage.class);

	private static final long START_WAIT_MILLIS = 2000;

	private final StringRedisTemplate redis;

	private final RedisConnectionFactory connectionFactory;

	private final String hash;

	private final String channel;

	private final Duration reconcileInterval;

	private volatile Runnable changed = () -> {
	};

	private volatile RateLimitOverrides.Listener resetListener = (policy, identity) -> {
	};

	private final String resets;

	/** Tells this instance's own announcements apart. */
	private final String instance = UUID.randomUUID().toString();

	/** The count of resets this instance has heard of, or -1 before it has read it. */
	private long resetsSeen = -1;

	private volatile @Nullable RedisMessageListenerContainer container;

	/** Whether Redis confirmed the subscription: a container's start may return before it does (a loaded machine). */
	private volatile boolean subscribed;

	private volatile Scheduler.@Nullable Worker reconciler;

	private volatile boolean running;

	/** A store under the rate limiter's key prefix, read again every {@code reconcileInterval} whatever it was told. */
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
		this.changed = listener;
	}

	/** Counts the reset and announces it; a failure is logged, never thrown (the count tells at the next reconcile). */
	@Override
	public void announceReset(@Nullable String policy, @Nullable String identity) {
		try {
			Long count = this.redis.opsForValue().increment(this.resets);
			if (count != null) {
				ResetMessage reset = new ResetMessage(this.instance, count, policy, identity);
				heard(reset);
				this.redis.convertAndSend(this.channel, RESET_WRITER.writeValueAsString(reset));
			}
		}
		catch (RuntimeException ex) {
			logger.debug("Could not announce a rate-limit reset; instances notice it at their next reconcile", ex);
		}
	}

	@Override
	public void onReset(RateLimitOverrides.Listener listener) {
		this.resetListener = listener;
	}

	private void received(Message message) {
		ResetMessage reset = ResetMessage.parse(new String(message.getBody(), StandardCharsets.UTF_8));
		if (reset != null) {
			heard(reset);
		}
		else {
			this.changed.run();
		}
	}

	/** A reset counted, here or elsewhere: after a gap in the count, or before it was read, it means everything. */
	private void heard(ResetMessage reset) {
		boolean gap;
		synchronized (this) {
			gap = this.resetsSeen < 0 || reset.count > this.resetsSeen + 1;
			this.resetsSeen = Math.max(this.resetsSeen, reset.count);
		}
		if (gap) {
			this.resetListener.stateReset(null, null);
		}
		else if (!reset.instance.equals(this.instance)) {
			this.resetListener.stateReset(reset.policy, reset.identity);
		}
	}

	/** Reads the count of resets: one not heard of stands for everything; one heard of meanwhile wins (newer). */
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
			this.resetListener.stateReset(null, null);
		}
	}

	/** Starts listening and reconciling; waits for the first try to listen at most {@value #START_WAIT_MILLIS} ms. */
	@Override
	public void start() {
		CountDownLatch tried = new CountDownLatch(1);
		synchronized (this) {
			if (this.running) {
				return;
			}
			this.running = true;
			Scheduler.Worker worker = Schedulers.boundedElastic().createWorker();
			worker.schedule(() -> {
				listen();
				tried.countDown();
			});
			long millis = this.reconcileInterval.toMillis();
			worker.schedulePeriodically(this::reconcile, millis, millis, TimeUnit.MILLISECONDS);
			this.reconciler = worker;
		}
		try {
			tried.await(START_WAIT_MILLIS, TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void reconcile() {
		listen();
		this.changed.run();
		reconcileResets();
	}

	/** Subscribes unless subscribed, outside the monitor (a stop never waits on Redis); closes one a stop overtook. */
	private void listen() {
		if (!this.running || this.container != null) {
			return;
		}
		RedisMessageListenerContainer listening = new RedisMessageListenerContainer();
		listening.setConnectionFactory(this.connectionFactory);
		listening.addMessageListener(new Subscriber(), new ChannelTopic(this.channel));
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
		synchronized (this) {
			if (this.running) {
				this.container = listening;
			}
		}
		if (this.container != listening) {
			destroy(listening);
		}
	}

	/** Hears the channel; once Redis confirms the subscription, reads the count (what came before it). */
	private final class Subscriber implements MessageListener, SubscriptionListener {

		@Override
		public void onMessage(Message message, byte @Nullable [] pattern) {
			received(message);
		}

		@Override
		public void onChannelSubscribed(byte[] channel, long count) {
			// resets counted from here on are heard of by message; read off the client's thread (a blocking call)
			Scheduler.Worker worker = RedisOverrideStore.this.reconciler;
			if (worker != null) {
				worker.schedule(() -> {
					RedisOverrideStore.this.subscribed = true;
					reconcileResets();
				});
			}
		}

		@Override
		public void onChannelUnsubscribed(byte[] channel, long count) {
			RedisOverrideStore.this.subscribed = false;
		}

	}

	/** Whether this instance hears changes and resets as announced: subscribed, the count of resets read once. */
	public synchronized boolean isListening() {
		return this.container != null && this.subscribed && this.resetsSeen >= 0;
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
		this.subscribed = false;
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
