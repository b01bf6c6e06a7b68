package io.github.ratelimit.spring.reactive;

import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.spring.RateLimitEnforcer;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilterChain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class RateLimitWebFilterTests {

	private static final String CLIENT = "198.51.100.7";

	private static MockServerWebExchange exchange(String path) {
		return MockServerWebExchange.from(MockServerHttpRequest.get(path).remoteAddress(new InetSocketAddress(CLIENT, 40000)));
	}

	/** A chain that records the exchange it was called with and completes. */
	private static final class RecordingChain implements WebFilterChain {

		final List<ServerWebExchange> calls = new ArrayList<>();

		final List<ExchangeScope> scopes = new ArrayList<>();

		@Override
		public Mono<Void> filter(ServerWebExchange exchange) {
			return Mono.deferContextual((context) -> {
				this.calls.add(exchange);
				this.scopes.add(context.getOrDefault(ExchangeScope.KEY, null));
				return Mono.empty();
			});
		}

	}

	@Test
	void requestsMatchingNoRuleReachTheChainWithoutHeadersButWithTheScopeInTheirContext() {
		RateLimitWebFilter filter = new RateLimitWebFilter(TestEnforcers.create().fixedWindow("api", 1, "ip")
			.rule("/api/**", "api")
			.build(), TestEnforcers.responses());
		RecordingChain chain = new RecordingChain();
		MockServerWebExchange exchange = exchange("/health");
		filter.filter(exchange, chain).block();
		assertThat(chain.calls).singleElement().satisfies((reached) -> {
			assertThat(reached.getRequest()).isSameAs(exchange.getRequest());
			assertThat(reached.getAttributes()).isSameAs(exchange.getAttributes());
		});
		assertThat(chain.scopes).singleElement().satisfies((scope) -> {
			assertThat(scope.exchange()).isSameAs(exchange);
			assertThat(scope.request().path()).isEqualTo("/health");
			assertThat(scope.isFilterOwned()).isTrue();
		});
		assertThat(exchange.getResponse().getHeaders().headerNames()).isEmpty();
		assertThat(scopeOf(exchange).decisions()).isEmpty();
	}

	@Test
	void admittedRequestsCarryExactHeadersAndReachTheChain() {
		RateLimitWebFilter filter = new RateLimitWebFilter(TestEnforcers.create().fixedWindow("api", 2, "ip")
			.rule("/api/**", "api")
			.build(), TestEnforcers.responses());
		RecordingChain chain = new RecordingChain();
		MockServerWebExchange exchange = exchange("/api/orders");
		filter.filter(exchange, chain).block();
		assertThat(chain.calls).singleElement().extracting(ServerWebExchange::getRequest).isSameAs(exchange.getRequest());
		assertThat(exchange.getResponse().getHeaders().toSingleValueMap()).containsEntry("X-RateLimit-Limit", "2")
			.containsEntry("X-RateLimit-Remaining", "1")
			.containsEntry("X-RateLimit-Reset", "1700000100")
			.containsEntry("RateLimit-Policy", "\"api\";q=2;w=60")
			.containsEntry("RateLimit", "\"api\";r=1;t=60")
			.doesNotContainKey("Retry-After");
		List<RateLimitDecision> decisions = scopeOf(exchange).decisions();
		assertThat(decisions).singleElement().satisfies((decision) -> {
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.decisions().get(0).identity()).isEqualTo("ip:" + CLIENT);
		});
	}

	@Test
	void deniedRequestsGetTheRejectionAndNeverReachTheChain() {
		RateLimitWebFilter filter = new RateLimitWebFilter(TestEnforcers.create().fixedWindow("api", 1, "ip")
			.rule("/api/**", "api")
			.build(), TestEnforcers.responses());
		RecordingChain chain = new RecordingChain();
		filter.filter(exchange("/api/orders"), chain).block();
		MockServerWebExchange denied = exchange("/api/orders");
		filter.filter(denied, chain).block();
		assertThat(chain.calls).hasSize(1);
		assertThat(denied.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(denied.getResponse().getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
		assertThat(denied.getResponse().getHeaders().toSingleValueMap()).containsEntry("Retry-After", "60")
			.containsEntry("X-RateLimit-Remaining", "0")
			.containsEntry("RateLimit", "\"api\";r=0;t=60");
		assertThat(denied.getResponse().getBodyAsString().block()).isEqualTo(
				"{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
				+ "\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\",\"status\":429,\"detail\":\"Rate limit exceeded ('api'). Retry after "
				+ "60 seconds.\",\"instance\":\"/api/orders\",\"violated-policies\":[\"api\"],\"policies\":[{\"name\":\"api\",\"limit\":1,"
				+ "\"remaining\":0,\"window\":60,\"retryAfter\":60}],\"retryAfter\":60}");
	}

	@Test
	void theClientIsTheRemoteAddressAndNeverAForwardedHeader() {
		RateLimitWebFilter filter = new RateLimitWebFilter(TestEnforcers.create().fixedWindow("api", 1, "ip")
			.rule("/**", "api")
			.build(), TestEnforcers.responses());
		RecordingChain chain = new RecordingChain();
		filter.filter(exchange("/a"), chain).block();
		MockServerWebExchange spoofed = MockServerWebExchange.from(MockServerHttpRequest.get("/a")
			.remoteAddress(new InetSocketAddress(CLIENT, 40001))
			.header("X-Forwarded-For", "203.0.113.99")
			.header("Forwarded", "for=203.0.113.98"));
		filter.filter(spoofed, chain).block();
		assertThat(spoofed.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(chain.calls).hasSize(1);
	}

	@Test
	void addressesFromSpringsForwardedHandlingAreTakenAsTheyCame() {
		// ForwardedHeaderTransformer makes unresolved addresses of trusted proxies' headers
		MockServerWebExchange ipv4 = MockServerWebExchange
			.from(MockServerHttpRequest.get("/").remoteAddress(InetSocketAddress.createUnresolved("203.0.113.5", 0)));
		MockServerWebExchange ipv6 = MockServerWebExchange
			.from(MockServerHttpRequest.get("/").remoteAddress(InetSocketAddress.createUnresolved("[2001:db8::1]", 0)));
		MockServerWebExchange none = MockServerWebExchange.from(MockServerHttpRequest.get("/"));
		assertThat(new ExchangeRequestContext(ipv4, null).remoteAddress()).isEqualTo("203.0.113.5");
		assertThat(new ExchangeRequestContext(ipv6, null).remoteAddress()).isEqualTo("2001:db8::1");
		assertThat(new ExchangeRequestContext(none, null).remoteAddress()).isNull();
	}

	@Test
	void thePrincipalIsResolvedForKeysAndPathsAreWithinTheApplication() {
		RateLimitWebFilter filter = new RateLimitWebFilter(TestEnforcers.create().fixedWindow("per-user", 1, "principal")
			.rule("/api/**", "per-user")
			.build(), TestEnforcers.responses());
		RecordingChain chain = new RecordingChain();
		Principal alice = () -> "alice";
		MockServerWebExchange first = MockServerWebExchange
			.builder(MockServerHttpRequest.get("/app/api/x").contextPath("/app"))
			.principal(alice)
			.build();
		filter.filter(first, chain).block();
		assertThat(chain.scopes.get(0).request().principal()).isSameAs(alice);
		assertThat(chain.scopes.get(0).request().path()).isEqualTo("/api/x");
		List<RateLimitDecision> decisions = scopeOf(first).decisions();
		assertThat(decisions.get(0).decisions().get(0).identity()).isEqualTo("principal:alice");
		MockServerWebExchange bob = MockServerWebExchange.builder(MockServerHttpRequest.get("/app/api/x").contextPath("/app"))
			.principal(() -> "bob")
			.build();
		filter.filter(bob, chain).block();
		MockServerWebExchange aliceAgain = MockServerWebExchange
			.builder(MockServerHttpRequest.get("/app/api/x").contextPath("/app"))
			.principal(alice)
			.build();
		filter.filter(aliceAgain, chain).block();
		assertThat(bob.getResponse().getStatusCode()).isNull();
		assertThat(aliceAgain.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(aliceAgain.getResponse().getBodyAsString().block()).contains("\"instance\":\"/app/api/x\"");
	}

	@Test
	void permitsAreReleasedWhenTheExchangeCompletes() {
		RateLimitWebFilter filter = concurrencyFilter(TestEnforcers.create());
		for (int i = 0; i < 3; i++) {
			MockServerWebExchange exchange = exchange("/slow");
			filter.filter(exchange, (ex) -> Mono.empty()).block();
			assertThat(exchange.getResponse().getStatusCode()).as("request %d", i).isNull();
		}
	}

	@Test
	void permitsAreReleasedBeforeTheResponseBodyIsSentSoASequentialClientIsNeverRefused() {
		List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
		RecordingPermit permit = new RecordingPermit(events);
		RateLimitWebFilter filter = new RateLimitWebFilter(TestEnforcers.create().build(), TestEnforcers.responses());
		MockServerWebExchange mock = exchange("/");
		ServerWebExchange server = mock.mutate().response(new ServerHttpResponseDecorator(mock.getResponse()) {
			@Override
			public Mono<Void> writeWith(org.reactivestreams.Publisher<? extends DataBuffer> body) {
				return super.writeWith(Flux.from(body).doOnNext((buffer) -> events.add("body sent")));
			}
		}).build();
		filter.filter(server, (ex) -> {
			List<Permit> permits = scopeOf(ex).permits();
			permits.add(permit);
			return ex.getResponse().writeWith(Mono.fromSupplier(() -> {
				events.add("body produced");
				return ex.getResponse().bufferFactory().wrap("done".getBytes());
			}));
		}).block();
		assertThat(events).containsExactly("body produced", "released", "body sent");
		assertThat(mock.getResponse().getBodyAsString().block()).isEqualTo("done");
	}

	@Test
	void permitsOfStreamsAreReleasedBeforeTheirEndAndOfEmptyResponsesBeforeTheyComplete() {
		List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
		RateLimitWebFilter filter = new RateLimitWebFilter(TestEnforcers.create().build(), TestEnforcers.responses());
		MockServerWebExchange streamed = exchange("/");
		filter.filter(streamed, (ex) -> {
			scopeOf(ex).permits().add(new RecordingPermit(events));
			return ex.getResponse().writeAndFlushWith(Flux.just("a", "b").map((item) -> Mono.fromSupplier(() -> {
				events.add(item);
				return ex.getResponse().bufferFactory().wrap(item.getBytes());
			})));
		}).block();
		assertThat(events).containsExactly("a", "b", "released");
		assertThat(streamed.getResponse().getBodyAsString().block()).isEqualTo("ab");
		events.clear();
		MockServerWebExchange empty = exchange("/");
		filter.filter(empty, (ex) -> {
			scopeOf(ex).permits().add(new RecordingPermit(events));
			return ex.getResponse().setComplete().doOnSuccess((done) -> events.add("completed"));
		}).block();
		assertThat(events).containsExactly("released", "completed");
	}

	@Test
	void permitsAreReleasedWhenTheExchangeFails() {
		RateLimitWebFilter filter = concurrencyFilter(TestEnforcers.create());
		for (int i = 0; i < 3; i++) {
			MockServerWebExchange exchange = exchange("/slow");
			assertThatIllegalStateException()
				.isThrownBy(() -> filter.filter(exchange, (ex) -> Mono.error(new IllegalStateException("boom"))).block())
				.withMessage("boom");
		}
		assertAdmitted(filter);
	}

	@Test
	void permitsAreReleasedWhenTheExchangeIsCancelled() {
		RateLimitWebFilter filter = concurrencyFilter(TestEnforcers.create());
		MockServerWebExchange exchange = exchange("/slow");
		Disposable inFlight = filter.filter(exchange, (ex) -> Mono.never()).subscribe();
		MockServerWebExchange whileInFlight = exchange("/slow");
		filter.filter(whileInFlight, (ex) -> Mono.empty()).block();
		assertThat(whileInFlight.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(scopeOf(exchange).permits()).hasSize(1);
		inFlight.dispose();
		assertAdmitted(filter);
	}

	@Test
	void permitsOthersAddToTheAttributeAreReleasedToo() {
		TestEnforcers enforcers = TestEnforcers.create().concurrency("slots", 1, "ip");
		RateLimitEnforcer enforcer = enforcers.build();
		RateLimitWebFilter filter = new RateLimitWebFilter(enforcer, TestEnforcers.responses());
		RateLimitRequest slot = RateLimitRequest.of(TestEnforcers.policy("slots", io.github.ratelimit.core.Algorithm.CONCURRENCY,
				1, java.time.Duration.ofMinutes(1)), "x");
		filter.filter(exchange("/"), (ex) -> {
			RateLimitDecision decision = enforcers.limiter().check(slot);
			List<Permit> permits = scopeOf(ex).permits();
			permits.add(decision.permit());
			return Mono.empty();
		}).block();
		assertThat(enforcers.limiter().check(slot).allowed()).isTrue();
	}

	@Test
	void aPermitStillInFlightWhenTheClientGoesAwayIsReleasedWhenItArrives() {
		GatedLimiter gated = new GatedLimiter();
		TestEnforcers enforcers = TestEnforcers.create();
		gated.delegate = enforcers.limiter();
		RateLimitWebFilter filter = concurrencyFilter(enforcers.limiter(gated));
		RecordingChain chain = new RecordingChain();
		gated.gate = Sinks.one();
		Disposable cancelled = filter.filter(exchange("/slow"), chain).subscribe();
		cancelled.dispose();
		gated.gate.tryEmitValue(true);
		assertThat(chain.calls).isEmpty();
		gated.gate = null;
		assertAdmitted(filter);
	}

	@Test
	void isOrderedJustAfterSpringSecurityByDefault() {
		RateLimitEnforcer enforcer = TestEnforcers.create().build();
		assertThat(new RateLimitWebFilter(enforcer, TestEnforcers.responses()).getOrder()).isEqualTo(-90);
		assertThat(new RateLimitWebFilter(enforcer, TestEnforcers.responses(), -120).getOrder()).isEqualTo(-120);
	}

	private static RateLimitWebFilter concurrencyFilter(TestEnforcers enforcers) {
		return new RateLimitWebFilter(enforcers.concurrency("slots", 1, "ip").rule("/slow", "slots").build(),
				TestEnforcers.responses());
	}

	private static void assertAdmitted(RateLimitWebFilter filter) {
		AtomicReference<ServerWebExchange> reached = new AtomicReference<>();
		MockServerWebExchange next = exchange("/slow");
		filter.filter(next, (ex) -> Mono.fromRunnable(() -> reached.set(ex))).block();
		assertThat(next.getResponse().getStatusCode()).as("the permit was released").isNull();
		assertThat(reached.get().getRequest()).isSameAs(next.getRequest());
	}

	/** A permit that records its (first) release. */
	static final class RecordingPermit implements Permit {

		private final List<String> events;

		private final java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();

		RecordingPermit(List<String> events) {
			this.events = events;
		}

		@Override
		public void release() {
			throw new UnsupportedOperationException("blocking release");
		}

		@Override
		public Mono<Void> releaseAsync() {
			return Mono.fromRunnable(() -> {
				if (this.released.compareAndSet(false, true)) {
					this.events.add("released");
				}
			});
		}

		@Override
		public boolean holdsAny() {
			return !this.released.get();
		}

	}

	/** A limiter whose answers wait for a gate, like a Redis reply still on its way when the client goes away. */
	static final class GatedLimiter implements RateLimiter {

		RateLimiter delegate;

		Sinks.One<Boolean> gate;

		@Override
		public RateLimitDecision check(RateLimitRequest request) {
			return this.delegate.check(request);
		}

		@Override
		public Mono<RateLimitDecision> checkAsync(RateLimitRequest request) {
			Sinks.One<Boolean> gate = this.gate;
			Mono<RateLimitDecision> check = this.delegate.checkAsync(request);
			// the backend takes the permit at once; only its answer waits
			return (gate != null) ? check.delayUntil((decision) -> gate.asMono()) : check;
		}

	}

	private static ExchangeScope scopeOf(ServerWebExchange exchange) {
		ExchangeScope scope = exchange.getAttribute(ExchangeScope.KEY);
		assertThat(scope).isNotNull();
		return scope;
	}

}
