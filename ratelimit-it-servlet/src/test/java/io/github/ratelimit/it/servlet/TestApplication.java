package io.github.ratelimit.it.servlet;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * The Spring MVC application the integration tests run on a random port: {@link DemoController} (filter rules and
 * {@code @RateLimited} methods), {@link InFlightController} (concurrency permits in every completion path) and a
 * catch-all {@code @ExceptionHandler(Exception.class)} ({@link CatchAllAdvice}).
 */
@SpringBootApplication
public class TestApplication {

	@Bean
	Gate gate() {
		return new Gate();
	}

	@Bean(destroyMethod = "shutdownNow")
	ExecutorService completions() {
		return Executors.newCachedThreadPool((task) -> {
			Thread thread = new Thread(task, "completions");
			thread.setDaemon(true);
			return thread;
		});
	}

}
