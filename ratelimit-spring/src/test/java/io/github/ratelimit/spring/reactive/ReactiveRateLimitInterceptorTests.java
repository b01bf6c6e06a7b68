package io.github.ratelimit.spring.reactive;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitResponses;
import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.spring.RateLimited;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.test.util.AopTestUtils;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.reactive.config.EnableWebFlux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class ReactiveRateLimitInterceptorTests {

	private AnnotationConfigApplicationContext context;

	@AfterEach
	void close() {
		if (this.context != null) {
			this.context.close();
		}
	}

	private WebTestClient client(Class<?>... configurations) {
		this.context = new AnnotationConfigApplicationContext(configurations);
		return WebTestClient.bindToApplicationContext(this.context).build();
	}

	@Test
	void monoHandlersAreLimitedPerSpelKeyOverAParameterAndDeniedCallsRunNoneOfTheMethod() {
		WebTestClient client = client(WithFilter.class);
		assertThat(AopUtils.isAopProxy(this.context.getBean(Api.class))).isTrue();
		Api api = api();
		for (int i = 0; i < 2; i++) {
			client.get().uri("/mono/acme").exchange().expectStatus().isOk().expectBody(String.class).isEqualTo("hello acme");
		}
		client.get()
			.uri("/mono/acme")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.expectHeader()
			.valueEquals("Retry-After", "60")
			.expectHeader()
			.valueEquals("RateLimit", "\"per-tenant\";r=0;t=60")
			.expectBody(String.class)
			.isEqualTo("{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\",\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\",\"status\":429,\"detail\":\"Rate limit "
					+ "exceeded ('per-tenant'). Retry after 60 seconds.\",\"instance\":\"/mono/acme\",\"violated-policies\":[\"per-tenant\"],\"policies\":[{"
					+ "\"name\":\"per-tenant\",\"limit\":2,\"remaining\":0,\"window\":60,\"retryAfter\":60}],"
					+ "\"retryAfter\":60}");
		assertThat(api.monoCalls).as("the denied call ran none of the method").hasValue(2);
		client.get().uri("/mono/globex").exchange().expectStatus().isOk();
		client.get().uri("/plain-text").exchange().expectStatus().isOk().expectBody(String.class).isEqualTo("plain");
	}

	@Test
	void fluxHandlersAreLimitedToo() {
		WebTestClient client = client(WithFilter.class);
		client.get()
			.uri("/flux/acme")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"per-tenant-stream\";q=1;w=60")
			.expectHeader()
			.valueEquals("RateLimit", "\"per-tenant-stream\";r=0;t=60")
			.expectBody(String.class)
			.isEqualTo("acme-1acme-2");
		client.get().uri("/flux/acme").exchange().expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(api().fluxCalls).hasValue(1);
	}

	@Test
	void filterRulesAndAnnotationsShareOneResponseAndAnAnnotationDenialTakesNoRuleQuota() {
		WebTestClient client = client(WithFilter.class);
		client.get()
			.uri("/rules/strict")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"per-ip\";q=5;w=60, \"strict\";q=1;w=60")
			.expectHeader()
			.valueEquals("RateLimit", "\"per-ip\";r=4;t=60, \"strict\";r=0;t=60")
			.expectHeader()
			.valueEquals("X-RateLimit-Remaining", "0");
		client.get()
			.uri("/rules/strict")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"per-ip\";q=5;w=60, \"strict\";q=1;w=60")
			.expectHeader()
			.valueEquals("RateLimit", "\"per-ip\";r=4;t=60, \"strict\";r=0;t=60")
			.expectBody(String.class)
			.consumeWith((result) -> assertThat(result.getResponseBody()).contains("\"policies\":[{\"name\":\"strict\""));
		client.get()
			.uri("/rules/open")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit", "\"per-ip\";r=3;t=60");
	}

	@Test
	void theCheckRunsOnSubscriptionOncePerSubscription() {
		client(WithFilter.class);
		Mono<String> assembled = this.context.getBean(Api.class).mono("initech");
		Api api = api();
		assertThat(api.monoCalls).as("nothing runs before subscription").hasValue(0);
		ExchangeScope scope = scope();
		assertThat(assembled.contextWrite(Context.of(ExchangeScope.KEY, scope)).block()).isEqualTo("hello initech");
		assertThat(assembled.contextWrite(Context.of(ExchangeScope.KEY, scope)).block()).isEqualTo("hello initech");
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> assembled.contextWrite(Context.of(ExchangeScope.KEY, scope)).block());
		assertThat(api.monoCalls).hasValue(2);
		List<RateLimitDecision> decisions = scope.decisions();
		assertThat(decisions).extracting(RateLimitDecision::allowed).containsExactly(true, true, false);
		assertThat(decisions.get(0).decisions().get(0).identity())
			.isEqualTo(KeySpec.parse("#tenant", (name) -> null).identity("initech"));
	}

	@Test
	void aSubscriptionOutsideOfAnExchangeIsCheckedAsABeanMethodCall() {
		client(WithFilter.class);
		Api proxy = this.context.getBean(Api.class);
		Mono<String> call = proxy.mono("x");
		assertThat(api().monoCalls).hasValue(0);
		assertThat(call.block()).isEqualTo("hello x");
		assertThat(call.block()).isEqualTo("hello x");
		RateLimitExceededException denial = catchThrowableOfType(RateLimitExceededException.class, call::block);
		assertThat(denial.decision().decisions()).singleElement()
			.satisfies((decision) -> assertThat(decision.identity())
				.isEqualTo(KeySpec.parse("#tenant", (name) -> null).identity("x")));
		assertThat(api().monoCalls).hasValue(2);
	}

	@Test
	void withoutTheFilterTheExchangeComesFromSpringsContextFilterAndPermitsAreReleasedByTheCall() {
		WebTestClient client = client(WithoutFilter.class);
		for (int i = 0; i < 3; i++) {
			client.get()
				.uri("/slot")
				.exchange()
				.expectStatus()
				.isOk()
				.expectHeader()
				.valueEquals("RateLimit-Policy", "\"slots\";q=1;qu=\"concurrent-requests\"");
		}
		client.get().uri("/rules/open").exchange().expectStatus().isOk().expectHeader().doesNotExist("RateLimit");
	}

	@Test
	void concurrencyPermitsOfMethodsAreReleasedWithTheExchange() {
		WebTestClient client = client(WithFilter.class);
		for (int i = 0; i < 3; i++) {
			client.get().uri("/slot").exchange().expectStatus().isOk();
		}
		client.get().uri("/slot-failing").exchange().expectStatus().is5xxServerError();
		client.get().uri("/slot").exchange().expectStatus().isOk();
	}

	@Test
	void methodsThatDoNotReturnMonoFluxOrPublisherFailAtStartup() {
		assertThatExceptionOfType(BeanCreationException.class).isThrownBy(() -> client(WithBlockingHandler.class))
			.havingRootCause()
			.isInstanceOf(IllegalStateException.class)
			.withMessageContaining("@RateLimited method " + BlockingApi.class.getName() + ".hello() which returns "
					+ "java.lang.String: in a WebFlux application a rate-limited method must return Mono, Flux or "
					+ "Publisher");
		assertThatExceptionOfType(BeanCreationException.class).isThrownBy(() -> client(WithClassLevelBlocking.class))
			.havingRootCause()
			.withMessageContaining(
					"@RateLimited applies to " + ClassLevel.class.getName() + ".plain() (through the annotation on its class)")
			.withMessageContaining("annotate the reactive methods instead of the class");
	}

	@Test
	void classLevelAnnotationsLimitEveryReactiveMethodButNotObjectMethods() {
		WebTestClient client = client(WithClassLevel.class);
		client.get().uri("/class/a").exchange().expectStatus().isOk();
		client.get().uri("/class/b").exchange().expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		ReactiveClassLevel bean = this.context.getBean(ReactiveClassLevel.class);
		assertThat(bean.toString()).isEqualTo("reactive class level");
	}

	@Test
	void unknownPoliciesFailAtStartupThroughTheSharedValidation() {
		assertThatExceptionOfType(BeanCreationException.class).isThrownBy(() -> client(WithUnknownPolicy.class))
			.havingRootCause()
			.withMessageContaining("names unknown policy 'nope'");
	}

	@Test
	void theEnforcerIsOnlyObtainedWhenARateLimitedBeanIsCreated() {
		client(WithoutRateLimitedBeans.class);
		assertThat(this.context.getBean(WithoutRateLimitedBeans.class).enforcerRequests).hasValue(0);
	}

	@Test
	void theExceptionHandlerLeavesOtherErrorsAlone() {
		RateLimitWebExceptionHandler handler = new RateLimitWebExceptionHandler(TestEnforcers.responses());
		assertThat(handler.getOrder()).isEqualTo(-2);
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/"));
		IllegalStateException other = new IllegalStateException("other");
		assertThatIllegalStateException().isThrownBy(() -> handler.handle(exchange, other).block()).isSameAs(other);
		assertThat(exchange.getResponse().getStatusCode()).isNull();
	}

	/** The controller behind its proxy, for its counters. */
	private Api api() {
		return AopTestUtils.getTargetObject(this.context.getBean(Api.class));
	}

	private ExchangeScope scope() {
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.get("/direct").remoteAddress(new InetSocketAddress("198.51.100.7", 1)));
		return ExchangeScope.open(exchange, new ExchangeRequestContext(exchange, null));
	}

	@RestController
	static class Api {

		final AtomicInteger monoCalls = new AtomicInteger();

		final AtomicInteger fluxCalls = new AtomicInteger();

		@GetMapping("/mono/{tenant}")
		@RateLimited(name = "per-tenant", algorithm = Algorithm.FIXED_WINDOW, limit = 2, window = "1m", key = "#tenant")
		public Mono<String> mono(@PathVariable String tenant) {
			this.monoCalls.incrementAndGet();
			return Mono.just("hello " + tenant);
		}

		@GetMapping("/flux/{tenant}")
		@RateLimited(name = "per-tenant-stream", algorithm = Algorithm.FIXED_WINDOW, limit = 1, window = "1m",
				key = "#tenant")
		public Flux<String> flux(@PathVariable String tenant) {
			this.fluxCalls.incrementAndGet();
			return Flux.just(tenant + "-1", tenant + "-2");
		}

		@GetMapping("/rules/strict")
		@RateLimited(name = "strict", algorithm = Algorithm.FIXED_WINDOW, limit = 1, window = "1m")
		public Mono<String> strict() {
			return Mono.just("strict");
		}

		@GetMapping("/rules/open")
		public Mono<String> open() {
			return Mono.just("open");
		}

		@GetMapping("/slot")
		@RateLimited("slots")
		public Publisher<String> slot() {
			return Mono.just("slot");
		}

		@GetMapping("/slot-failing")
		@RateLimited("slots")
		public Mono<String> slotFailing() {
			return Mono.error(new IllegalStateException("failing"));
		}

		/** Not rate-limited: needs no reactive return type. */
		@GetMapping("/plain-text")
		public String plainText() {
			return "plain";
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableWebFlux
	static class Common {

		@Bean
		RateLimitEnforcer rateLimitEnforcer() {
			return TestEnforcers.create()
				.fixedWindow("per-ip", 5, "ip")
				.concurrency("slots", 1, "ip")
				.rule("/rules/**", "per-ip")
				.build();
		}

		@Bean
		RateLimitResponses rateLimitResponses() {
			return TestEnforcers.responses();
		}

		@Bean
		RateLimitWebExceptionHandler rateLimitWebExceptionHandler(RateLimitResponses responses) {
			return new RateLimitWebExceptionHandler(responses);
		}

		@Bean
		static ReactiveRateLimitedMethodPostProcessor rateLimitedMethodPostProcessor(
				ObjectProvider<RateLimitEnforcer> enforcer, ObjectProvider<RateLimitResponses> responses) {
			return new ReactiveRateLimitedMethodPostProcessor(enforcer::getObject, responses::getObject);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(Common.class)
	static class WithFilter {

		@Bean
		RateLimitWebFilter rateLimitWebFilter(RateLimitEnforcer enforcer, RateLimitResponses responses) {
			return new RateLimitWebFilter(enforcer, responses);
		}

		@Bean
		Api api() {
			return new Api();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(Common.class)
	static class WithoutFilter {

		@Bean
		ServerWebExchangeContextFilter serverWebExchangeContextFilter() {
			return new ServerWebExchangeContextFilter();
		}

		@Bean
		Api api() {
			return new Api();
		}

	}

	@RestController
	static class BlockingApi {

		@GetMapping("/blocking")
		@RateLimited(name = "blocking", algorithm = Algorithm.GCRA, limit = 1, window = "1s")
		public String hello() {
			return "hello";
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(Common.class)
	static class WithBlockingHandler {

		@Bean
		BlockingApi blockingApi() {
			return new BlockingApi();
		}

	}

	@RestController
	@RateLimited(name = "class-level", algorithm = Algorithm.GCRA, limit = 1, window = "1m")
	static class ClassLevel {

		@GetMapping("/class/reactive")
		public Mono<String> reactive() {
			return Mono.just("ok");
		}

		public String plain() {
			return "plain";
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(Common.class)
	static class WithClassLevelBlocking {

		@Bean
		ClassLevel classLevel() {
			return new ClassLevel();
		}

	}

	@RestController
	@RateLimited(name = "class-level", algorithm = Algorithm.FIXED_WINDOW, limit = 1, window = "1m")
	static class ReactiveClassLevel {

		@GetMapping("/class/a")
		public Mono<String> a() {
			return Mono.just("a");
		}

		@GetMapping("/class/b")
		public Flux<String> b() {
			return Flux.just("b");
		}

		@Override
		public String toString() {
			return "reactive class level";
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(Common.class)
	static class WithClassLevel {

		@Bean
		RateLimitWebFilter rateLimitWebFilter(RateLimitEnforcer enforcer, RateLimitResponses responses) {
			return new RateLimitWebFilter(enforcer, responses);
		}

		@Bean
		ReactiveClassLevel reactiveClassLevel() {
			return new ReactiveClassLevel();
		}

	}

	@RestController
	static class UnknownPolicyApi {

		@GetMapping("/unknown")
		@RateLimited("nope")
		public Mono<String> unknown() {
			return Mono.just("unknown");
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(Common.class)
	static class WithUnknownPolicy {

		@Bean
		UnknownPolicyApi unknownPolicyApi() {
			return new UnknownPolicyApi();
		}

	}

	@RestController
	static class PlainApi {

		@GetMapping("/plain")
		public String plain() {
			return "plain";
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableWebFlux
	static class WithoutRateLimitedBeans {

		final AtomicInteger enforcerRequests = new AtomicInteger();

		@Bean
		static ReactiveRateLimitedMethodPostProcessor rateLimitedMethodPostProcessor() {
			return new ReactiveRateLimitedMethodPostProcessor(() -> {
				throw new IllegalStateException("the enforcer must not be needed");
			}, () -> {
				throw new IllegalStateException("the responses must not be needed");
			});
		}

		@Bean
		PlainApi plainApi() {
			return new PlainApi();
		}

	}

}
