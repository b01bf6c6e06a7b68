package io.github.ratelimit.spring.servlet;

import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.RateLimitExceededException;
import org.junit.jupiter.api.Test;

import org.springframework.core.Ordered;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.servlet.ModelAndView;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitExceptionResolverTests {

	private final TestEnforcers enforcers = new TestEnforcers()
		.policy("orders", Algorithm.GCRA, 1, Duration.ofSeconds(30), "ip")
		.rule("/orders", "orders");

	private final RateLimitEnforcer enforcer = this.enforcers.build();

	private final RateLimitExceptionResolver resolver = new RateLimitExceptionResolver(this.enforcers.responses());

	@Test
	void writesTheRejectionOfTheDenial() throws Exception {
		MockHttpServletResponse response = new MockHttpServletResponse();
		response.setHeader("X-RateLimit-Remaining", "7");
		ModelAndView view = this.resolver.resolveException(new MockHttpServletRequest("GET", "/orders"), response,
				null, new RateLimitExceededException(denial()));
		assertThat(view).isNotNull();
		assertThat(view.isEmpty()).isTrue();
		assertThat(response.getStatus()).isEqualTo(429);
		assertThat(response.getContentType()).isEqualTo("application/problem+json");
		assertThat(response.getHeader("Retry-After")).isEqualTo("30");
		assertThat(response.getHeader("X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(response.getHeader("RateLimit")).isEqualTo("\"orders\";r=0;t=30");
		assertThat(response.getContentAsString()).startsWith("{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\",\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\"")
			.contains("\"instance\":\"/orders\"")
			.endsWith("\"retryAfter\":30}");
	}

	@Test
	void findsTheDenialAsACause() {
		MockHttpServletResponse response = new MockHttpServletResponse();
		ModelAndView view = this.resolver.resolveException(new MockHttpServletRequest("GET", "/orders"), response,
				null, new UndeclaredThrowableException(new RateLimitExceededException(denial())));
		assertThat(view).isNotNull();
		assertThat(response.getStatus()).isEqualTo(429);
	}

	@Test
	void leavesOtherExceptionsToTheNextResolvers() {
		MockHttpServletResponse response = new MockHttpServletResponse();
		assertThat(this.resolver.resolveException(new MockHttpServletRequest(), response, null,
				new IllegalStateException("boom")))
			.isNull();
		assertThat(response.getStatus()).isEqualTo(200);
	}

	@Test
	void leavesACommittedResponseAlone() throws Exception {
		MockHttpServletResponse response = new MockHttpServletResponse();
		response.getWriter().write("partial");
		response.flushBuffer();
		assertThat(this.resolver.resolveException(new MockHttpServletRequest(), response, null,
				new RateLimitExceededException(denial())))
			.isNull();
		assertThat(response.getStatus()).isEqualTo(200);
	}

	@Test
	void runsAheadOfSpringMvcsResolvers() {
		assertThat(this.resolver.getOrder()).isEqualTo(RateLimitExceptionResolver.DEFAULT_ORDER).isLessThan(0)
			.isGreaterThan(Ordered.HIGHEST_PRECEDENCE);
	}

	private RateLimitDecision denial() {
		ServletRequestContext context = new ServletRequestContext(request());
		RateLimitDecision admitted = this.enforcer
			.checkAsync(context, this.enforcer.ruleTargets("GET", "/orders"), null, null)
			.block();
		assertThat(admitted.allowed()).isTrue();
		RateLimitDecision denied = this.enforcer
			.checkAsync(context, this.enforcer.ruleTargets("GET", "/orders"), null, null)
			.block();
		assertThat(denied.allowed()).isFalse();
		return denied;
	}

	private static MockHttpServletRequest request() {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/orders");
		request.setRemoteAddr("192.0.2.1");
		return request;
	}

}
