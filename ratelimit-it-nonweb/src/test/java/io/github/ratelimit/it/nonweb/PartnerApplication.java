package io.github.ratelimit.it.nonweb;

import io.github.ratelimit.core.RateLimiter;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * A plain Spring Boot application (no web server on the classpath) whose partner client is rate-limited.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class PartnerApplication {

	@Bean
	PartnerClient partnerClient() {
		return new PartnerClient();
	}

	/** Wraps the starter's limiter so that the tests see each decision. */
	@Bean
	static BeanPostProcessor recordingRateLimiter() {
		return new BeanPostProcessor() {

			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				return (bean instanceof RateLimiter limiter && !(bean instanceof RecordingRateLimiter))
						? new RecordingRateLimiter(limiter) : bean;
			}

		};
	}

}
