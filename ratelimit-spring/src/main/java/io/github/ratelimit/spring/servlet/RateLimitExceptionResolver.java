package io.github.ratelimit.spring.servlet;

import java.io.IOException;

import io.github.ratelimit.core.Waits;
import io.github.ratelimit.spring.RateLimitExceededException;
import io.github.ratelimit.spring.RateLimitResponses;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Turns a {@link RateLimitExceededException}, also as the cause of another, into the rejection, giving back what the
 * request's admitted decisions took, ahead of Spring MVC's resolvers; a committed response is left alone.
 */
public final class RateLimitExceptionResolver implements HandlerExceptionResolver, Ordered {

	/** The default order: just after the highest precedence, ahead of Spring MVC's resolvers. */
	public static final int DEFAULT_ORDER = Ordered.HIGHEST_PRECEDENCE + 100;

	private static final Log logger = LogFactory.getLog(RateLimitExceptionResolver.class);

	private final RateLimitResponses responses;

	private final int order;

	/** A resolver at the {@link #DEFAULT_ORDER default order}. */
	public RateLimitExceptionResolver(RateLimitResponses responses) {
		this(responses, DEFAULT_ORDER);
	}

	/** A resolver at an order of the application's among its {@link HandlerExceptionResolver}s. */
	public RateLimitExceptionResolver(RateLimitResponses responses, int order) {
		this.responses = responses;
		this.order = order;
	}

	@Override
	public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
			@Nullable Object handler, Exception ex) {
		RateLimitExceededException denial = RateLimitExceededException.findIn(ex);
		if (denial == null || response.isCommitted()) {
			return null;
		}
		try {
			RequestScope scope = RequestScope.of(request);
			Waits.await(scope.reverseAdmitted());
			RequestScope.write(response, this.responses.reject(denial.decision(), scope.request()));
		}
		catch (IOException writeFailure) {
			logger.debug("Could not write the rate-limit rejection", writeFailure);
		}
		return new ModelAndView();
	}

	@Override
	public int getOrder() {
		return this.order;
	}

}
