package io.github.ratelimit.it.webflux;

import java.time.Duration;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.spring.RateLimited;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * A WebFlux application on Netty with the starter and Spring Data Redis (Lettuce). Filter rules come from
 * {@code application.yml}; the handlers below add {@code @RateLimited} policies.
 */
@SpringBootApplication
public class WebfluxTestApplication {

	/** Paths under filter rules only ({@code /open} under none). */
	@RestController
	static class RuleController {

		@GetMapping({ "/api/hello", "/ip/hello", "/short/hello", "/shared/hello", "/combined/plain", "/open",
				"/outage/open", "/outage/closed", "/outage/local" })
		Mono<String> hello() {
			return Mono.just("hello");
		}

		@GetMapping("/rule-stream/once")
		Mono<String> once() {
			return Mono.just("once");
		}

		/** Blocks the event loop on purpose: BlockHound must catch it. */
		@GetMapping("/blocking/sleep")
		Mono<String> sleep() {
			return Mono.fromCallable(() -> {
				Thread.sleep(1);
				return "slept";
			});
		}

		/** Never completes by itself: a client that goes away cancels it. */
		@GetMapping(path = "/rule-stream/infinite", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
		Flux<ServerSentEvent<String>> infinite() {
			return ticks();
		}

	}

	/** Handlers with @RateLimited policies of their own. */
	@RestController
	static class AnnotatedController {

		private final TenantService tenants;

		AnnotatedController(TenantService tenants) {
			this.tenants = tenants;
		}

		@GetMapping("/shadow/rule")
		public Mono<String> shadowRule() {
			return Mono.just("rule");
		}

		@GetMapping("/shadow/method/{id}")
		// a sliding window log: a fixed window's boundary (each whole hour) between two requests would refill it
		@RateLimited(name = "trial-inline", algorithm = Algorithm.SLIDING_WINDOW_LOG, limit = 1, window = "1h",
				key = "#id", shadow = true)
		public Mono<String> shadowMethod(@PathVariable String id) {
			return Mono.just("method " + id);
		}

		@GetMapping("/tenants/{tenant}/mono")
		@RateLimited(name = "tenant-mono", algorithm = Algorithm.SLIDING_WINDOW_LOG, limit = 2, window = "1h",
				key = "#tenant")
		public Mono<String> mono(@PathVariable String tenant) {
			return Mono.just("mono " + tenant);
		}

		@GetMapping("/tenants/{tenant}/flux")
		@RateLimited(name = "tenant-flux", algorithm = Algorithm.SLIDING_WINDOW_LOG, limit = 1, window = "1h",
				key = "#tenant")
		public Flux<String> flux(@PathVariable String tenant) {
			return Flux.just("flux ", tenant);
		}

		/** Calls the rate-limited service twice but subscribes to one result only. */
		@GetMapping("/tenants/{tenant}/assembled-twice")
		public Mono<String> assembledTwice(@PathVariable String tenant) {
			Mono<String> unused = this.tenants.greet(tenant);
			return this.tenants.greet(tenant).map((greeting) -> greeting + " (" + (unused != null) + ")");
		}

		@GetMapping("/combined/{tenant}")
		@RateLimited(name = "combined-annotation", algorithm = Algorithm.GCRA, limit = 1, window = "1h",
				key = "#tenant")
		public Mono<String> combined(@PathVariable String tenant) {
			return Mono.just("combined " + tenant);
		}

		@GetMapping("/slot/ok")
		@RateLimited("slots")
		public Mono<String> ok() {
			return Mono.just("ok");
		}

		@GetMapping("/slot/error")
		@RateLimited("slots")
		public Mono<String> error() {
			return Mono.error(new IllegalStateException("handler failed"));
		}

		@GetMapping(path = "/slot/sse-finite", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
		@RateLimited("slots")
		public Flux<ServerSentEvent<String>> finite() {
			return Flux.range(0, 3).delayElements(Duration.ofMillis(20)).map((i) -> ServerSentEvent.builder("event-" + i).build());
		}

		@GetMapping(path = "/slot/sse-infinite", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
		@RateLimited("slots")
		public Flux<ServerSentEvent<String>> infinite() {
			return ticks();
		}

	}

	/**
	 * An endless stream that honours backpressure ({@code Flux.interval} fails with an overflow when the writer asks
	 * for the next event later than the tick, which would end the stream by an error instead of by the client).
	 * @return one event every 100 ms
	 */
	static Flux<ServerSentEvent<String>> ticks() {
		return Flux.range(0, Integer.MAX_VALUE)
			.delayElements(Duration.ofMillis(100))
			.map((i) -> ServerSentEvent.builder("tick-" + i).build());
	}

	/** A rate-limited service: its policy is checked when a caller subscribes to its result. */
	@Service
	static class TenantService {

		@RateLimited(name = "tenant-greeting", algorithm = Algorithm.SLIDING_WINDOW_LOG, limit = 2, window = "1h",
				key = "#tenant")
		public Mono<String> greet(String tenant) {
			return Mono.just("greetings " + tenant);
		}

	}

	/** A @RateLimited handler under an application's catch-all exception handler (CatchAllAdvice). */
	@RestController
	static class CatchAllController {

		@GetMapping("/catch-all/{tenant}")
		// a sliding window log: a fixed window's boundary (each whole hour) between two requests would refill it
		@RateLimited(name = "catch-all", algorithm = Algorithm.SLIDING_WINDOW_LOG, limit = 1, window = "1h",
				key = "#tenant")
		Mono<String> limited(@PathVariable String tenant) {
			return Mono.just("ok " + tenant);
		}

	}

	/** An application's catch-all exception handler, as many have: it must not swallow rate-limit denials. */
	@RestControllerAdvice(assignableTypes = CatchAllController.class)
	static class CatchAllAdvice {

		@ExceptionHandler(Exception.class)
		ResponseEntity<String> handle(Exception ex) {
			return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR)
				.body("handled " + ex.getClass().getSimpleName());
		}

	}

}
