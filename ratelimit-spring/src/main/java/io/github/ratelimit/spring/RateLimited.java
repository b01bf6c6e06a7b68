package io.github.ratelimit.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.FailureMode;

import org.springframework.core.annotation.AliasFor;

/**
 * Rate-limits a method, or every public method of a class: a controller's handlers (a denial is the 429) or any
 * other bean's methods (a denial throws {@link RateLimitExceededException}, or the call waits up to
 * {@link #maxWait()}). Repeatable: a method's policies (and its class's) are checked together. Name a configured
 * policy ({@code @RateLimited("per-user")}) or define one inline
 * ({@code @RateLimited(name = "search", algorithm = Algorithm.GCRA, limit = 10, window = "1s")}); mistakes fail at
 * startup. {@code Mono}, {@code Flux} and {@code CompletableFuture} results are checked without blocking.
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(RateLimited.List.class)
public @interface RateLimited {

	/** The name of a configured policy ({@code ratelimit.policies.<name>}); alias for {@link #policy()}. */
	@AliasFor("policy")
	String value() default "";

	/** The name of a configured policy ({@code ratelimit.policies.<name>}). */
	@AliasFor("value")
	String policy() default "";

	/**
	 * The key: {@code ip}, {@code header:<Name>}, {@code principal}, {@code global}, {@code @beanName} (a
	 * {@link KeyResolver} bean), or a SpEL expression over {@code #request}, {@code #principal} and the method's
	 * parameters by name (e.g. {@code #tenantId}). Empty: the policy's own key. Outside a web request {@code ip} and
	 * {@code header:} find no identity, and {@code principal} is the security context's authenticated user.
	 */
	String key() default "";

	/** The cost of one call; 0 means the policy's cost. */
	long cost() default 0;

	/** The name of an inline policy; requires {@link #algorithm()}, {@link #limit()} and {@link #window()}. */
	String name() default "";

	/** Inline policy: the algorithm, required; one (an array, as an annotation attribute has no null). */
	Algorithm[] algorithm() default {};

	/** Inline policy: requests per window. */
	long limit() default 0;

	/**
	 * Inline policy: the window, in a format Spring's {@code @DurationFormat} detects: ISO-8601 ({@code PT1M}),
	 * simple ({@code 500ms}, {@code 10s}, {@code 1m}) or composite ({@code 1h30m}); a plain number is milliseconds.
	 */
	String window() default "";

	/** Inline policy: the burst (token bucket and GCRA); 0 means the limit. */
	long burst() default 0;

	/** Inline policy: what it does when the backend cannot decide; none means {@code ratelimit.failure-mode}. */
	FailureMode[] failureMode() default {};

	/**
	 * Shadow mode for this use of the policy: checked and counted, never denying (outcome {@code shadow_denied}). A
	 * configured policy with {@code shadow: true} is in shadow mode wherever it is used.
	 */
	boolean shadow() default false;

	/**
	 * How long a denied bean method call (not a controller's) may wait for its turn: it waits out each retry-after
	 * (without blocking for reactive and future results) and is checked again, and throws
	 * {@link RateLimitExceededException} once the next wait would end past this. Empty: the policies' longest
	 * {@code max-wait}; {@code 0}: never wait. The longest of a method's annotations applies.
	 */
	String maxWait() default "";

	/** Holds repeated {@link RateLimited} annotations. */
	@Target({ ElementType.METHOD, ElementType.TYPE })
	@Retention(RetentionPolicy.RUNTIME)
	@Documented
	@interface List {

		RateLimited[] value();

	}

}
