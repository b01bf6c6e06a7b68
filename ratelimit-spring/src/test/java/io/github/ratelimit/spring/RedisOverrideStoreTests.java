package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitDenialCache;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.RedisServers;
import io.github.ratelimit.testkit.Wait;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What two instances sharing a Redis hear of each other through {@link RedisOverrideStore}: override changes, once
 * per changed override, and announced resets, with the count of resets catching a message that never arrived. A
 * denial cache's listener forgets what each names.
 */
class RedisOverrideStoreTests {

	private static final Duration PROPAGATION = Duration.ofSeconds(10);

	private final List<LettuceConnectionFactory> factories = new ArrayList<>();

	private final List<RedisOverrideStore> stores = new ArrayList<>();

	private RedisServer redis;

	@BeforeEach
	void flush() {
		this.redis = RedisServers.standalone();
		this.redis.flushAll();
	}

	@AfterEach
	void stop() {
		this.stores.forEach(RedisOverrideStore::stop);
		this.factories.forEach(LettuceConnectionFactory::destroy);
	}

	/** The resets an instance heard by their messages, without those its reconciles found by the count. */
	private static List<String> byMessage(Instance instance) {
		return instance.heard.stream().filter((heard) -> !heard.equals("reset null null")).toList();
	}

	/** An instance: its own connection, store and overrides, recording what its listeners hear. */
	private Instance instance() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.redis.host(), this.redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		this.factories.add(factory);
		RedisOverrideStore store = new RedisOverrideStore(factory, "rl:", Duration.ofMillis(200));
		this.stores.add(store);
		RateLimitOverrides overrides = new RateLimitOverrides(store);
		Instance instance = new Instance(overrides, store);
		overrides.addListener(instance);
		store.start();
		return instance;
	}

	@Test
	void aResetAnnouncedByOneInstanceReachesEveryInstanceOnce() {
		Instance a = instance();
		Instance b = instance();
		a.awaitFirstCountRead();
		b.awaitFirstCountRead();
		a.overrides.announceReset("api", "ip:203.0.113.7");
		assertThat(byMessage(a)).as("heard at once where it was made").containsExactly("reset api ip:203.0.113.7");
		Wait.until("the other instance hears of the reset", PROPAGATION,
				() -> b.heard.contains("reset api ip:203.0.113.7"));
		b.overrides.announceReset(null, "ip:a:b:c");
		b.overrides.announceReset("api", null);
		Wait.until("the first instance hears of the others' resets", PROPAGATION,
				() -> a.heard.contains("reset api null"));
		// its own announcement, published before the other's, arrived before them and was not heard twice; a
		// reconcile that counted a reset before its message arrived (a loaded machine's pub/sub latency) is heard as a
		// reset of everything besides, as it must be when a message is lost, and is left out here
		assertThat(byMessage(a)).containsExactly("reset api ip:203.0.113.7", "reset null ip:a:b:c", "reset api null");
		assertThat(byMessage(b)).containsExactly("reset api ip:203.0.113.7", "reset null ip:a:b:c", "reset api null");
	}

	@Test
	void aResetWhoseMessageWasMissedIsCaughtByTheCountAtTheNextReconcile() {
		Instance a = instance();
		a.awaitFirstCountRead();
		// an instance counted a reset, and its message never arrived (a subscription reconnecting, say)
		this.redis.commands().incr("rl:resets");
		Wait.until("the count says something was reset", PROPAGATION, () -> a.heard.contains("reset null null"));
	}

	@Test
	void overrideChangesAreHeardOnEveryInstanceOncePerChangedOverride() {
		Instance a = instance();
		Instance b = instance();
		a.awaitFirstCountRead();
		b.awaitFirstCountRead();
		a.overrides.set("api", null, new RuntimeOverride(7L, null, null, null));
		assertThat(a.heard).containsExactly("override api null");
		a.overrides.set("api", "big-customer", new RuntimeOverride(700L, null, null, null));
		a.overrides.remove("api", null);
		a.overrides.set(RateLimitOverrides.ALL, null, new RuntimeOverride(null, null, null, null, false));
		List<String> expected = List.of("override api null", "override api big-customer", "override api null",
				"override * null");
		assertThat(a.heard).containsExactlyElementsOf(expected);
		Wait.until("the other instance applies every change", PROPAGATION,
				() -> !b.overrides.enforced("api") && b.overrides.of("api") == null
						&& b.overrides.identities("api").containsKey("big-customer"));
		// reconciles read the same overrides again: nothing more is heard (a reset counted and heard by the
		// reconcile shows that one ran after the changes)
		this.redis.commands().incr("rl:resets");
		Wait.until("a reconcile ran", PROPAGATION, () -> a.heard.contains("reset null null")
				&& b.heard.contains("reset null null"));
		assertThat(a.heard).containsExactlyElementsOf(concat(expected, "reset null null"));
		assertThat(b.heard).filteredOn((event) -> event.startsWith("override")).isNotEmpty()
			.allMatch(expected::contains);
	}

	@Test
	void aDenialCachesListenerForgetsWhatAChangeOrAResetNames() {
		RateLimitDenialCache cache = RateLimitDenialCache.create();
		DefaultRateLimiter limiter = DefaultRateLimiter.builder(new LocalRateLimitBackend())
			.guarded(false)
			.denialCache(cache)
			.build();
		RateLimitPolicy api = policy("api");
		RateLimitPolicy other = policy("other");
		RateLimitOverrides.Listener listener = RateLimitOverrides.Listener.invalidating(cache);
		Runnable deny = () -> {
			for (RateLimitPolicy policy : List.of(api, other)) {
				for (String identity : List.of("ip:1", "ip:2")) {
					limiter.check(RateLimitRequest.of(policy, identity));
					limiter.check(RateLimitRequest.of(policy, identity));
				}
			}
		};
		deny.run();
		assertThat(cache.size()).isEqualTo(4);
		listener.stateReset("api", "ip:1");
		assertThat(cache.size()).isEqualTo(3);
		listener.stateReset(null, "ip:2");
		assertThat(cache.size()).isEqualTo(1);
		listener.stateReset("other", null);
		assertThat(cache.size()).isZero();
		deny.run();
		listener.overrideChanged("api", "big-customer");
		assertThat(cache.size()).as("an identity override forgets its whole policy").isEqualTo(2);
		listener.overrideChanged("other", null);
		assertThat(cache.size()).isZero();
		deny.run();
		listener.overrideChanged(RateLimitOverrides.ALL, null);
		assertThat(cache.size()).isZero();
		deny.run();
		listener.stateReset(null, null);
		assertThat(cache.size()).isZero();
	}

	/** A sliding window log: a fixed window's end (each whole hour) would let the cached denials lapse mid-test. */
	private static RateLimitPolicy policy(String name) {
		return RateLimitPolicy.builder(name).algorithm(Algorithm.SLIDING_WINDOW_LOG).limit(1)
			.window(Duration.ofHours(1)).build();
	}

	private static List<String> concat(List<String> list, String last) {
		List<String> all = new ArrayList<>(list);
		all.add(last);
		return all;
	}

	/** An instance's overrides, and what its listener heard, in order. */
	private static final class Instance implements RateLimitOverrides.Listener {

		final RateLimitOverrides overrides;

		final RedisOverrideStore store;

		final List<String> heard = new CopyOnWriteArrayList<>();

		Instance(RateLimitOverrides overrides, RedisOverrideStore store) {
			this.overrides = overrides;
			this.store = store;
		}

		@Override
		public void overrideChanged(String policy, @Nullable String identity) {
			this.heard.add("override " + policy + " " + identity);
		}

		@Override
		public void stateReset(@Nullable String policy, @Nullable String identity) {
			this.heard.add("reset " + policy + " " + identity);
		}

		/** The first read of the count of resets stands for everything (nothing was known before): then forgotten. */
		void awaitFirstCountRead() {
			// the count may be read before Redis confirms the subscription (a loaded machine): both are awaited
			Wait.until("the count of resets is read", PROPAGATION, () -> this.heard.contains("reset null null"));
			Wait.until("the subscription is confirmed", PROPAGATION, this.store::isListening);
			assertThat(this.store.isListening()).isTrue();
			this.heard.clear();
		}

	}

}
