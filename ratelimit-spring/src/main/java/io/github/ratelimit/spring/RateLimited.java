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
 * Rate-limits a method, or every public method of a class: a controller's handler methods (denials become the 429)
 * or any other Spring bean's methods, such as services, {@code @Scheduled} jobs, message listeners and HTTP clients,
 * in web and non-web applications (denials throw {@link RateLimitExceededException}, or the call waits for its turn
 * up to {@link #maxWait()}). Repeatable: all policies of a method (and of its class) are evaluated together, in a
 * request with the filter rules that match it.
 * <p>
 * Either name a policy of {@code ratelimit.policies} ({@code @RateLimited("per-user")}), or define one inline
 * ({@code @RateLimited(name = "search", algorithm = Algorithm.GCRA, limit = 10, window = "1s")}). Unknown policy
 * names and invalid inline definitions fail at startup.
 * <p>
 * For reactive handlers ({@code Mono}, {@code Flux}) the check runs when the result is subscribed to, without
 * blocking; for a bean method returning {@code CompletableFuture} the check does not block the caller either.
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(RateLimited.List.class)
public @interface RateLimited {

	/**
	 * The name of a configured policy ({@code ratelimit.policies.<name>}); alias for {@link #policy()}.
	 * @return the policy name
	 */
	@AliasFor("policy")
	String value() default "";

	/**
	 * The name of a configured policy ({@code ratelimit.policies.<name>}).
	 * @return the policy name
	 */
	@AliasFor("value")
	String policy() default "";

	/**
	 * The key: {@code ip}, {@code header:<Name>}, {@code principal}, {@code global}, {@code @beanName} (a
	 * {@link KeyResolver} bean), or a SpEL expression over {@code #request}, {@code #principal} and the method's
	 * parameters by name (e.g. {@code #tenantId}). Empty: the policy's own key. Outside a web request {@code ip} and
	 * {@code header:} find no identity, and {@code principal} is the security context's authenticated user.
	 * @return the key specification
	 */
	String key() default "";

	/**
	 * The cost of one call; 0 means the policy's cost.
	 * @return the cost
	 */
	long cost() default 0;

	/**
	 * The name of an inline policy (defined by this annotation). Requires {@link #algorithm()}, {@link #limit()}
	 * and {@link #window()}.
	 * @return the inline policy name
	 */
	String name() default "";

	/**
	 * Inline policy: the algorithm, required. An array so that it can be left out (an annotation attribute has no
	 * null): at most one.
	 * @return the algorithm, or none
	 */
	Algorithm[] algorithm() default {};

	/**
	 * Inline policy: requests per window.
	 * @return the limit
	 */
	long limit() default 0;

	/**
	 * Inline policy: the window, in a format Spring's {@code @DurationFormat} detects: ISO-8601 ({@code PT1M}),
	 * simple ({@code 500ms}, {@code 10s}, {@code 1m}) or composite ({@code 1h30m}); a plain number is milliseconds.
	 * @return the window
	 */
	String window() default "";

	/**
	 * Inline policy: the burst (token bucket and GCRA); 0 means the limit.
	 * @return the burst
	 */
	long burst() default 0;

	/**
	 * Inline policy: what it does when the rate-limit backend cannot decide; none means the application's default
	 * ({@code ratelimit.failure-mode}). An array for that "none" (an annotation attribute has no null): at most one.
	 * @return the failure mode, or none
	 */
	FailureMode[] failureMode() default {};

	/**
	 * Shadow mode for this use of the policy (inline or configured): checked and counted as usual, but never
	 * denying; a request it would have denied is admitted and counted under the outcome {@code shadow_denied}. A
	 * configured policy with {@code shadow: true} is in shadow mode wherever it is used.
	 * @return true for shadow mode
	 */
	boolean shadow() default false;

	/**
	 * How long a call of a bean method (not a controller's handler) may wait for its turn when denied: the call waits
	 * for the decision's retry-after (parking the thread, or delaying without blocking for {@code Mono},
	 * {@code Flux} and {@code CompletableFuture}) and is checked again, until admitted, or until the next wait would
	 * end after this much time since the call: then {@link RateLimitExceededException} is thrown. In the formats of
	 * {@link #window()}; empty means the policies' {@code max-wait} (the longest of them), {@code 0} means never
	 * wait. When several annotations of a method set it, the longest applies.
	 * @return the longest wait
	 */
	String maxWait() default "";

	/**
	 * Holds repeated {@link RateLimited} annotations.
	 */
	@Target({ ElementType.METHOD, ElementType.TYPE })
	@Retention(RetentionPolicy.RUNTIME)
	@Documented
	@interface List {

		RateLimited[] value();

	}

}
