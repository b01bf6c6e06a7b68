package io.github.ratelimit.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small application limited by the starter: a filter rule per client address ({@link GreetingController}), an API
 * key policy with tiers and an enterprise override ({@link QuoteController}, {@link ApiKeyTiers}), a
 * {@code @RateLimited} method with a SpEL key, a concurrency-limited slow endpoint ({@link ReportController}), and
 * the Actuator. Run with {@code java -jar} it keeps its limits in memory ({@link RedisRunHint} says how to get the
 * Redis run); {@code TestSampleApplication} in {@code src/test} runs two instances on a real Redis.
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
