package io.github.ratelimit.spring.servlet;

import java.time.Duration;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.RateLimitEnforcer;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;

class PermitReleaseHandlerInterceptorTests {

	private final RateLimitEnforcer enforcer = new TestEnforcers()
		.policy("inflight", Algorithm.CONCURRENCY, 1, Duration.ofMinutes(1), "ip")
		.rule("/reports", "inflight")
		.build();

	private final PermitReleaseHandlerInterceptor interceptor = new PermitReleaseHandlerInterceptor();

	@Test
	void releasesThePermitsAfterTheHandlerWhenNoFilterOwnsThem() {
		MockHttpServletRequest request = request();
		take(request);
		assertThat(tryTake()).isFalse();
		this.interceptor.afterCompletion(request, new MockHttpServletResponse(), new Object(), null);
		assertThat(tryTake()).isTrue();
	}

	@Test
	void releasesThePermitsOfAnAsyncRequestWhenItCompletes() {
		MockHttpServletRequest request = request();
		request.setAsyncSupported(true);
		take(request);
		request.startAsync();
		this.interceptor.afterConcurrentHandlingStarted(request, new MockHttpServletResponse(), new Object());
		assertThat(tryTake()).isFalse();
		request.getAsyncContext().complete();
		assertThat(tryTake()).isTrue();
	}

	@Test
	void leavesThePermitsToTheFilterThatOwnsThem() {
		MockHttpServletRequest request = request();
		RequestScope.of(request).ownRelease();
		take(request);
		this.interceptor.afterCompletion(request, new MockHttpServletResponse(), new Object(), null);
		assertThat(tryTake()).isFalse();
	}

	private void take(MockHttpServletRequest request) {
		RateLimitDecision decision = check();
		assertThat(decision.allowed()).isTrue();
		RequestScope.of(request).record(decision);
	}

	private boolean tryTake() {
		RateLimitDecision decision = check();
		decision.permit().release();
		return decision.allowed();
	}

	private RateLimitDecision check() {
		return this.enforcer
			.checkAsync(new ServletRequestContext(request()), this.enforcer.ruleTargets("GET", "/reports"), null, null)
			.block();
	}

	private static MockHttpServletRequest request() {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/reports");
		request.setRemoteAddr("192.0.2.1");
		return request;
	}

}
