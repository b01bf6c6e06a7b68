package io.github.ratelimit.spring.servlet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitExceededException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockAsyncContext;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class RateLimitFilterTests {

	private static final long NOW_SECONDS = TestEnforcers.NOW_MILLIS / 1000;

	private final TestEnforcers enforcers = new TestEnforcers()
		.policy("api", Algorithm.GCRA, 2, Duration.ofSeconds(10), "ip")
		.policy("inflight", Algorithm.CONCURRENCY, 1, Duration.ofMinutes(1), "ip")
		.rule("/api/**", "api")
		.rule("/slow/**", "inflight");

	private final RateLimitEnforcer enforcer = this.enforcers.build();

	private final RateLimitFilter filter = new RateLimitFilter(this.enforcer, this.enforcers.responses());

	@Test
	void requestMatchingNoRulePassesWithoutHeaders() throws Exception {
		MockHttpServletResponse response = new MockHttpServletResponse();
		MockFilterChain chain = new MockFilterChain();
		this.filter.doFilter(request("/other"), response, chain);
		assertThat(chain.getRequest()).isNotNull();
		assertThat(response.getStatus()).isEqualTo(200);
		assertThat(response.getHeaderNames()).isEmpty();
	}

	@Test
	void admittedRequestGetsTheHeadersAndItsDecisionIsRecorded() throws Exception {
		MockHttpServletRequest request = request("/api/orders");
		MockHttpServletResponse response = new MockHttpServletResponse();
		MockFilterChain chain = new MockFilterChain();
		this.filter.doFilter(request, response, chain);
		assertThat(chain.getRequest()).isSameAs(request);
		assertThat(response.getHeader("X-RateLimit-Limit")).isEqualTo("2");
		assertThat(response.getHeader("X-RateLimit-Remaining")).isEqualTo("1");
		assertThat(response.getHeader("X-RateLimit-Reset")).isEqualTo(Long.toString(NOW_SECONDS + 5));
		assertThat(response.getHeader("RateLimit-Policy")).isEqualTo("\"api\";q=2;w=10");
		assertThat(response.getHeader("RateLimit")).isEqualTo("\"api\";r=1;t=5");
		assertThat(response.getHeader("Retry-After")).isNull();
		@SuppressWarnings("unchecked")
		List<RateLimitDecision> decisions = RequestScope.of(request).decisions();
		assertThat(decisions).singleElement().satisfies((decision) -> assertThat(decision.allowed()).isTrue());
	}

	@Test
	void deniedRequestGetsTheProblemAndGoesNoFurther() throws Exception {
		this.filter.doFilter(request("/api/orders"), new MockHttpServletResponse(), new MockFilterChain());
		this.filter.doFilter(request("/api/orders"), new MockHttpServletResponse(), new MockFilterChain());
		MockHttpServletResponse response = new MockHttpServletResponse();
		MockFilterChain chain = new MockFilterChain();
		this.filter.doFilter(request("/api/orders"), response, chain);
		assertThat(chain.getRequest()).isNull();
		assertThat(response.getStatus()).isEqualTo(429);
		assertThat(response.getContentType()).isEqualTo("application/problem+json");
		assertThat(response.getHeader("Retry-After")).isEqualTo("5");
		assertThat(response.getHeader("X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(response.getHeader("RateLimit")).isEqualTo("\"api\";r=0;t=5");
		assertThat(response.getContentAsString(StandardCharsets.UTF_8)).isEqualTo(
				"{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
				+ "\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\",\"status\":429,"
				+ "\"detail\":\"Rate limit exceeded ('api'). Retry after 5 seconds.\",\"instance\":\"/api/orders\","
				+ "\"violated-policies\":[\"api\"],\"policies\":[{\"name\":\"api\",\"limit\":2,\"remaining\":0,\"window\":10,\"retryAfter\":5}],"
				+ "\"retryAfter\":5}");
		this.enforcers.advance(Duration.ofSeconds(5));
		MockHttpServletResponse later = new MockHttpServletResponse();
		this.filter.doFilter(request("/api/orders"), later, new MockFilterChain());
		assertThat(later.getStatus()).isEqualTo(200);
	}

	@Test
	void rulesMatchThePathWithinTheApplication() throws Exception {
		MockHttpServletRequest request = request("/shop/api/orders");
		request.setContextPath("/shop");
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request, response, new MockFilterChain());
		assertThat(response.getHeader("RateLimit")).isEqualTo("\"api\";r=1;t=5");
	}

	@Test
	void spoofedForwardedForDoesNotGiveFreshQuota() throws Exception {
		for (int i = 0; i < 2; i++) {
			MockHttpServletRequest request = request("/api/orders");
			request.addHeader("X-Forwarded-For", "198.51.100." + i);
			this.filter.doFilter(request, new MockHttpServletResponse(), new MockFilterChain());
		}
		MockHttpServletRequest request = request("/api/orders");
		request.addHeader("X-Forwarded-For", "198.51.100.99");
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request, response, new MockFilterChain());
		assertThat(response.getStatus()).isEqualTo(429);
	}

	@Test
	void permitIsHeldWhileInFlightAndReleasedAfterTheChain() throws Exception {
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request("/slow/report"), response,
				(req, res) -> assertThat(statusOf("/slow/report")).isEqualTo(429));
		assertThat(response.getStatus()).isEqualTo(200);
		assertThat(statusOf("/slow/report")).isEqualTo(200);
		assertThat(statusOf("/slow/report")).isEqualTo(200);
	}

	@Test
	void permitIsReleasedWhenTheChainThrows() throws Exception {
		FilterChain failing = (req, res) -> {
			throw new IllegalStateException("handler failed");
		};
		assertThatIllegalStateException()
			.isThrownBy(() -> this.filter.doFilter(request("/slow/report"), new MockHttpServletResponse(), failing))
			.withMessage("handler failed");
		assertThat(statusOf("/slow/report")).isEqualTo(200);
	}

	@Test
	void permitOfAnAsyncRequestIsReleasedWhenItCompletes() throws Exception {
		MockHttpServletRequest request = asyncRequest("/slow/report");
		this.filter.doFilter(request, new MockHttpServletResponse(), FilterChainThatStartsAsync.INSTANCE);
		assertThat(request.isAsyncStarted()).isTrue();
		assertThat(statusOf("/slow/report")).isEqualTo(429);
		request.getAsyncContext().complete();
		assertThat(statusOf("/slow/report")).isEqualTo(200);
	}

	@Test
	void permitOfAnAsyncRequestIsReleasedOnTimeoutAndOnError() throws Exception {
		for (String outcome : List.of("timeout", "error")) {
			MockHttpServletRequest request = asyncRequest("/slow/report");
			this.filter.doFilter(request, new MockHttpServletResponse(), FilterChainThatStartsAsync.INSTANCE);
			assertThat(statusOf("/slow/report")).isEqualTo(429);
			MockAsyncContext context = (MockAsyncContext) request.getAsyncContext();
			assertThat(context.getListeners()).hasSize(1);
			AsyncEvent event = new AsyncEvent(context, new IOException(outcome));
			for (AsyncListener listener : context.getListeners()) {
				if (outcome.equals("timeout")) {
					listener.onTimeout(event);
				}
				else {
					listener.onError(event);
				}
			}
			assertThat(statusOf("/slow/report")).as(outcome).isEqualTo(200);
		}
	}

	@Test
	void releasingListenerFollowsANewAsyncCycle() throws Exception {
		MockHttpServletRequest request = asyncRequest("/slow/report");
		this.filter.doFilter(request, new MockHttpServletResponse(), FilterChainThatStartsAsync.INSTANCE);
		MockAsyncContext first = (MockAsyncContext) request.getAsyncContext();
		AsyncContext second = request.startAsync();
		for (AsyncListener listener : first.getListeners()) {
			listener.onStartAsync(new AsyncEvent(second));
		}
		assertThat(statusOf("/slow/report")).isEqualTo(429);
		second.complete();
		assertThat(statusOf("/slow/report")).isEqualTo(200);
	}

	@Test
	void permitsTakenLaterInTheChainAreReleasedToo() throws Exception {
		FilterChain takesPermit = (req, res) -> {
			RateLimitDecision decision = this.enforcer
				.checkAsync(new ServletRequestContext((MockHttpServletRequest) req),
						this.enforcer.ruleTargets("GET", "/slow/x"), null, null)
				.block();
			assertThat(decision.allowed()).isTrue();
			RequestScope.of((MockHttpServletRequest) req).record(decision);
		};
		MockHttpServletRequest request = request("/other");
		this.filter.doFilter(request, new MockHttpServletResponse(), takesPermit);
		assertThat(permitsOf(request)).singleElement().satisfies((permit) -> assertThat(permit.holdsAny()).isFalse());
		assertThat(statusOf("/slow/report")).isEqualTo(200);
	}

	@Test
	void rateLimitExceededExceptionFromTheChainBecomesTheRejection() throws Exception {
		this.filter.doFilter(request("/api/a"), new MockHttpServletResponse(), new MockFilterChain());
		this.filter.doFilter(request("/api/a"), new MockHttpServletResponse(), new MockFilterChain());
		RateLimitDecision denied = this.enforcer
			.checkAsync(new ServletRequestContext(request("/api/a")), this.enforcer.ruleTargets("GET", "/api/a"), null,
					null)
			.block();
		assertThat(denied.allowed()).isFalse();
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request("/other"), response, (req, res) -> {
			throw new RateLimitExceededException(denied);
		});
		assertThat(response.getStatus()).isEqualTo(429);
		assertThat(response.getHeader("Retry-After")).isEqualTo("5");
		assertThat(response.getContentAsString()).contains("\"instance\":\"/other\"");
	}

	@Test
	void asyncDispatchesPassAndAnErrorDispatchGetsTheHeadersBackWithoutASecondCheck() throws Exception {
		assertThat(this.filter.shouldNotFilterAsyncDispatch()).isTrue();
		MockHttpServletRequest request = request("/api/a");
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request, response, new MockFilterChain());
		assertThat(response.getHeader("X-RateLimit-Remaining")).isEqualTo("1");
		// the container renders an error page on a reset response
		request.setDispatcherType(DispatcherType.ERROR);
		MockHttpServletResponse errorPage = new MockHttpServletResponse();
		MockFilterChain errorChain = new MockFilterChain();
		this.filter.doFilter(request, errorPage, errorChain);
		assertThat(errorChain.getRequest()).as("the error page is rendered").isNotNull();
		assertThat(errorPage.getHeader("X-RateLimit-Remaining")).isEqualTo("1");
		assertThat(errorPage.getHeader("RateLimit")).isEqualTo(response.getHeader("RateLimit"));
		MockHttpServletResponse next = new MockHttpServletResponse();
		this.filter.doFilter(request("/api/a"), next, new MockFilterChain());
		assertThat(next.getHeader("X-RateLimit-Remaining")).as("counted once").isEqualTo("0");
	}

	private int statusOf(String path) throws ServletException, IOException {
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request(path), response, new MockFilterChain());
		return response.getStatus();
	}

	@SuppressWarnings("unchecked")
	private static List<Permit> permitsOf(ServletRequest request) {
		return (RequestScope.find(request) != null) ? RequestScope.find(request).permits() : null;
	}

	private static MockHttpServletRequest request(String path) {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", path);
		request.setRemoteAddr("192.0.2.1");
		return request;
	}

	private static MockHttpServletRequest asyncRequest(String path) {
		MockHttpServletRequest request = request(path);
		request.setAsyncSupported(true);
		return request;
	}

	private enum FilterChainThatStartsAsync implements FilterChain {

		INSTANCE;

		@Override
		public void doFilter(ServletRequest request, ServletResponse response) {
			request.startAsync();
		}

	}

}
