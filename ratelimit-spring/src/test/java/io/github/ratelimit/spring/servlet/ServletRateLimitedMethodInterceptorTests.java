package io.github.ratelimit.spring.servlet;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.KeySpec;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.spring.RateLimited;
import io.github.ratelimit.spring.RateLimitedCallInterceptor;
import jakarta.servlet.FilterChain;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class ServletRateLimitedMethodInterceptorTests {

	private final TestEnforcers enforcers = new TestEnforcers()
		.policy("api", Algorithm.GCRA, 2, Duration.ofSeconds(10), "ip")
		.policy("orders", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1), "ip")
		.policy("inflight", Algorithm.CONCURRENCY, 1, Duration.ofMinutes(1), "ip")
		.rule("/api/**", "api");

	private final RateLimitEnforcer enforcer = this.enforcers.build();

	private final RateLimitFilter filter = new RateLimitFilter(this.enforcer, this.enforcers.responses());

	private final Orders orders = proxy(new Orders());

	private final Catalog catalog = proxy(new Catalog());

	@AfterEach
	void resetRequest() {
		RequestContextHolder.resetRequestAttributes();
	}

	@Test
	void outsideARequestTheMethodIsCheckedAsABeanMethodCall() {
		// no request: the ip key finds no identity, so the calls share one (missing-key: shared)
		assertThat(this.orders.order("42")).isEqualTo("order 42");
		RateLimitExceededException denial = catchThrowableOfType(RateLimitExceededException.class,
				() -> this.orders.order("42"));
		assertThat(denial.decision().decisions()).singleElement().satisfies((decision) -> {
			assertThat(decision.policy().name()).isEqualTo("orders");
			assertThat(decision.allowed()).isFalse();
		});
		assertThat(RequestContextHolder.getRequestAttributes()).isNull();
	}

	@Test
	void admittedCallAddsItsDecisionAndTheHeadersOfAllTheRequestsPolicies() throws Exception {
		MockHttpServletRequest request = request("/api/orders/42");
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request, response, callingInRequest(() -> this.orders.order("42")));
		assertThat(response.getStatus()).isEqualTo(200);
		assertThat(response.getHeader("RateLimit-Policy")).isEqualTo("\"api\";q=2;w=10, \"orders\";q=1;w=60");
		assertThat(response.getHeader("RateLimit")).startsWith("\"api\";r=1;t=5, \"orders\";r=0;t=");
		assertThat(response.getHeader("X-RateLimit-Limit")).isEqualTo("1");
		assertThat(response.getHeader("X-RateLimit-Remaining")).isEqualTo("0");
		@SuppressWarnings("unchecked")
		List<RateLimitDecision> decisions = RequestScope.of(request).decisions();
		assertThat(decisions).hasSize(2);
	}

	@Test
	void denialGivesBackWhatTheFilterTookAndCarriesAllPolicies() throws Exception {
		this.filter.doFilter(request("/api/orders/42"), new MockHttpServletResponse(),
				callingInRequest(() -> this.orders.order("42")));
		MockHttpServletResponse denied = new MockHttpServletResponse();
		this.filter.doFilter(request("/api/orders/42"), denied, callingInRequest(() -> this.orders.order("42")));
		assertThat(denied.getStatus()).isEqualTo(429);
		assertThat(denied.getHeader("RateLimit-Policy")).isEqualTo("\"api\";q=2;w=10, \"orders\";q=1;w=60");
		assertThat(denied.getHeader("X-RateLimit-Limit")).isEqualTo("1");
		assertThat(denied.getContentAsString()).contains("\"policies\":[{\"name\":\"orders\"");
		// The denied request gave back its 'api' quota: one of the two is still there, then none.
		MockHttpServletResponse next = new MockHttpServletResponse();
		this.filter.doFilter(request("/api/other"), next, new MockFilterChain());
		assertThat(next.getStatus()).isEqualTo(200);
		assertThat(next.getHeader("X-RateLimit-Remaining")).isEqualTo("0");
		MockHttpServletResponse exhausted = new MockHttpServletResponse();
		this.filter.doFilter(request("/api/other"), exhausted, new MockFilterChain());
		assertThat(exhausted.getStatus()).isEqualTo(429);
	}

	@Test
	void deniedCallThrowsWithTheMergedDecision() {
		bind(request("/orders/1"));
		this.orders.order("1");
		bind(request("/orders/1"));
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.orders.order("1"))
			.satisfies((ex) -> {
				assertThat(ex.decision().allowed()).isFalse();
				assertThat(ex.decision().decisions()).extracting((d) -> d.policy().name()).containsExactly("orders");
			});
	}

	@Test
	void secondDenialInOneRequestGivesBackTheFirstCallsQuotaWhenThe429IsWritten() {
		MockHttpServletRequest request = request("/tenants");
		bind(request);
		assertThat(this.orders.tenant("acme")).isEqualTo("acme");
		assertThat(this.orders.order("1")).isEqualTo("order 1");
		RateLimitExceededException denial = catchThrowableOfType(RateLimitExceededException.class,
				() -> this.orders.order("2"));
		assertThat(denial.decision().decisions()).extracting((d) -> d.identity())
			.containsExactly(KeySpec.parse("#tenant", (name) -> null).identity("acme"), "ip:192.0.2.1", "ip:192.0.2.1");
		MockHttpServletResponse response = new MockHttpServletResponse();
		new RateLimitExceptionResolver(this.enforcers.responses()).resolveException(request, response, null, denial);
		assertThat(response.getStatus()).isEqualTo(429);
		bind(request("/tenants"));
		assertThat(this.orders.tenant("acme")).isEqualTo("acme");
	}

	@Test
	void aDenialTheApplicationRecoversFromGivesNothingBack() {
		bind(request("/tenants"));
		assertThat(this.orders.tenant("acme")).isEqualTo("acme");
		assertThat(this.orders.order("1")).isEqualTo("order 1");
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.orders.order("2"));
		// the application caught the denial and served the request: the tenant's call stays counted
		bind(request("/tenants"));
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.orders.tenant("acme"));
	}

	@Test
	void keyExpressionOverAParameterCountsEachValueApart() {
		bind(request("/tenants"));
		assertThat(this.orders.tenant("acme")).isEqualTo("acme");
		assertThat(this.orders.tenant("globex")).isEqualTo("globex");
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.orders.tenant("acme"));
	}

	@Test
	void permitOfAMethodIsReleasedWithTheResponse() throws Exception {
		MockHttpServletResponse first = new MockHttpServletResponse();
		this.filter.doFilter(request("/reports"), first, callingInRequest(() -> {
			this.orders.report();
			MockHttpServletRequest second = request("/reports");
			bind(second);
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(this.orders::report);
		}));
		bind(request("/reports"));
		assertThat(this.orders.report()).isEqualTo("report");
	}

	@Test
	void classLevelAnnotationLimitsEveryMethodButThoseOfObject() {
		bind(request("/catalog"));
		for (int i = 0; i < 3; i++) {
			assertThat(this.catalog.toString()).isEqualTo("Catalog");
		}
		assertThat(this.catalog.list()).isEqualTo("list");
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(this.catalog::list);
	}

	@SuppressWarnings("unchecked")
	private <T> T proxy(T target) {
		ProxyFactory factory = new ProxyFactory(target);
		factory.setProxyTargetClass(true);
		factory.addAdvice(new ServletRateLimitedMethodInterceptor(() -> this.enforcer,
				this.enforcers::responses, new RateLimitedCallInterceptor(() -> this.enforcer, (policy) -> null)));
		return (T) factory.getProxy();
	}

	private FilterChain callingInRequest(Runnable call) {
		return (req, res) -> {
			RequestContextHolder.setRequestAttributes(
					new ServletRequestAttributes((MockHttpServletRequest) req, (MockHttpServletResponse) res));
			try {
				call.run();
			}
			finally {
				RequestContextHolder.resetRequestAttributes();
			}
		};
	}

	private static void bind(MockHttpServletRequest request) {
		RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request, new MockHttpServletResponse()));
	}

	private static MockHttpServletRequest request(String path) {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", path);
		request.setRemoteAddr("192.0.2.1");
		return request;
	}

	@RateLimited("orders")
	static class Catalog {

		public String list() {
			return "list";
		}

		@Override
		public String toString() {
			return "Catalog";
		}

	}

	static class Orders {

		@RateLimited("orders")
		public String order(String id) {
			return "order " + id;
		}

		@RateLimited(value = "orders", key = "#tenant")
		public String tenant(String tenant) {
			return tenant;
		}

		@RateLimited("inflight")
		public String report() {
			return "report";
		}

		@Override
		public String toString() {
			return "Orders";
		}

	}

}
