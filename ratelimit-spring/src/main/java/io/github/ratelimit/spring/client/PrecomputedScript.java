package io.github.ratelimit.spring.client;

import org.springframework.data.redis.core.script.DigestUtils;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * A script whose SHA-1 is computed once. Spring's {@code DefaultRedisScript} takes a lock on every
 * {@code getSha1()}, which two event loops sending at once contend for: a thread of a WebClient's event loop then
 * parks (BlockHound caught it in the reactive partner client's test).
 * @param <T> the script's result type
 */
final class PrecomputedScript<T> implements RedisScript<T> {

	private final String source;

	private final Class<T> resultType;

	private final String sha1;

	private PrecomputedScript(String source, Class<T> resultType) {
		this.source = source;
		this.resultType = resultType;
		this.sha1 = DigestUtils.sha1DigestAsHex(source);
	}

	static <T> PrecomputedScript<T> of(String source, Class<T> resultType) {
		return new PrecomputedScript<>(source, resultType);
	}

	@Override
	public String getSha1() {
		return this.sha1;
	}

	@Override
	public Class<T> getResultType() {
		return this.resultType;
	}

	@Override
	public String getScriptAsString() {
		return this.source;
	}

}
