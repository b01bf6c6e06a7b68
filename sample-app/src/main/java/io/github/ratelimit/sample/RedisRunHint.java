package io.github.ratelimit.sample;

import io.github.ratelimit.core.RateLimitBackend;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Says how to get the Redis run when this instance keeps its limits in memory (the plain {@code java -jar} run).
 */
@Component
public class RedisRunHint {

	private static final Log logger = LogFactory.getLog(RedisRunHint.class);

	private final RateLimitBackend backend;

	public RedisRunHint(RateLimitBackend backend) {
		this.backend = backend;
	}

	@EventListener(ApplicationReadyEvent.class)
	public void hint() {
		if ("local".equals(this.backend.kind())) {
			logger.warn("This sample keeps its limits in this instance's memory. To see one limit shared by two "
					+ "instances through a real Redis (nothing to install), run from the repository: "
					+ "./mvnw -q -pl sample-app -am spring-boot:test-run");
		}
	}

}
