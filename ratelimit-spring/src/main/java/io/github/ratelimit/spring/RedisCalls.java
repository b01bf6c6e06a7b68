package io.github.ratelimit.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Script calls of {@link RedisTopDenials} that wait at most a timeout, so that a frozen Redis holds no reader for
 * the client's command timeout (Boot's default: 60 s): through the reactive template on a reactive factory
 * (Lettuce), its wait given up at the timeout; on any other factory through the blocking template, which waits the
 * client's own command timeout. A timeout or failure is thrown.
 */
final class RedisCalls {

	private final @Nullable ReactiveStringRedisTemplate reactive;

	private final StringRedisTemplate blocking;

	private final Duration timeout;

	RedisCalls(RedisConnectionFactory factory, Duration timeout) {
		this.reactive = (factory instanceof ReactiveRedisConnectionFactory reactiveFactory)
				? new ReactiveStringRedisTemplate(reactiveFactory) : null;
		this.blocking = new StringRedisTemplate(factory);
		this.timeout = timeout;
	}

	/** Runs a script for what it does. */
	void run(RedisScript<?> script, List<String> keys, String... args) {
		list(script, keys, args);
	}

	/** Runs a script; its reply as a list (a list reply's elements, or the one value). */
	List<Object> list(RedisScript<?> script, List<String> keys, String... args) {
		List<Object> replies = new ArrayList<>();
		if (this.reactive != null) {
			List<?> received = this.reactive.execute(script, keys, List.of(args)).collectList().block(this.timeout);
			if (received != null) {
				received.forEach((reply) -> add(replies, reply));
			}
		}
		else {
			add(replies, this.blocking.execute(script, keys, (Object[]) args));
		}
		return replies;
	}

	private static void add(List<Object> replies, @Nullable Object reply) {
		if (reply instanceof Collection<?> elements) {
			replies.addAll(elements);
		}
		else if (reply != null) {
			replies.add(reply);
		}
	}

}
