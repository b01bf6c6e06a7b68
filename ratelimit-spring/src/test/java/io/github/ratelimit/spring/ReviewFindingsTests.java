package io.github.ratelimit.spring;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Regressions for the web-integration review: annotations found where the enforcer finds them, per-class caching,
 * rule validation, HEAD under GET rules, and doubled slashes.
 */
class ReviewFindingsTests {

	private static KeyResolver noBeans(String name) {
		throw new IllegalArgumentException("no KeyResolver bean named '" + name + "'");
	}

	private static ConfiguredPolicy policy(String name) {
		return ConfiguredPolicy.of(RateLimitPolicy.builder(name)
			.algorithm(Algorithm.FIXED_WINDOW)
			.limit(5)
			.window(Duration.ofMinutes(1))
			.build(), KeySpec.parse("ip", ReviewFindingsTests::noBeans), MissingKey.SHARED);
	}

	private static RateLimitEnforcer enforcer(List<RateLimitRule> rules) {
		return new RateLimitEnforcer(new DefaultRateLimiter(new LocalRateLimitBackend()),
				List.of(policy("a"), policy("b"), policy("p")), rules, RateLimitHeaders.ALL,
				new ProblemDetailRejectionHandler(), ReviewFindingsTests::noBeans, System::currentTimeMillis);
	}

	@Test
	void annotationsOnInterfaceMethodsAndMetaAnnotationsAreIntercepted() throws Exception {
		RateLimitEnforcer enforcer = enforcer(List.of());
		RateLimitedMethodPostProcessor postProcessor = new RateLimitedMethodPostProcessor(() -> enforcer,
				(invocation) -> "intercepted") {
		};
		postProcessor.setBeanFactory(new org.springframework.beans.factory.support.DefaultListableBeanFactory());
		Object viaInterface = postProcessor.postProcessAfterInitialization(new Implementation(), "implementation");
		assertThat(AopUtils.isAopProxy(viaInterface)).isTrue();
		assertThat(((Api) viaInterface).viaInterface()).isEqualTo("intercepted");
		Object viaMeta = postProcessor.postProcessAfterInitialization(new MetaAnnotated(), "meta");
		assertThat(AopUtils.isAopProxy(viaMeta)).isTrue();
		assertThat(enforcer.annotationTargets(MetaAnnotated.class.getMethod("search"), MetaAnnotated.class))
			.extracting((target) -> target.policy().name())
			.containsExactly("a");
	}

	@Test
	void classLevelPoliciesOfSubclassesDoNotLeakThroughAnInheritedMethod() throws Exception {
		RateLimitEnforcer enforcer = enforcer(List.of());
		Method get = Base.class.getMethod("get");
		assertThat(enforcer.annotationTargets(get, Users.class)).extracting((t) -> t.policy().name()).containsExactly("a");
		assertThat(enforcer.annotationTargets(get, Orders.class)).extracting((t) -> t.policy().name()).containsExactly("b");
	}

	@Test
	void rulesRejectPathsWithoutASlashAndUnknownMethods() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitRule.of(List.of("api/**"), Set.of(), List.of("p")))
			.withMessageContaining("must start with '/'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitRule.of(List.of("/api/**"), Set.of("GTE"), List.of("p")))
			.withMessageContaining("'GTE' is not an HTTP method");
	}

	@Test
	void headIsCoveredByGetRulesAndDoubledSlashesMatchAsSingleOnes() {
		RateLimitEnforcer enforcer = enforcer(List.of(RateLimitRule.of(List.of("/api/**"), Set.of("GET"), List.of("p"))));
		assertThat(enforcer.ruleTargets("HEAD", "/api/hello")).hasSize(1);
		assertThat(enforcer.ruleTargets("POST", "/api/hello")).isEmpty();
		assertThat(enforcer.ruleTargets("GET", "//api//hello")).hasSize(1);
	}

	public interface Api {

		@RateLimited("a")
		String viaInterface();

	}

	public static class Implementation implements Api {

		@Override
		public String viaInterface() {
			return "real";
		}

	}

	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@RateLimited("a")
	public @interface LimitedByA {

	}

	public static class MetaAnnotated {

		@LimitedByA
		public String search() {
			return "real";
		}

	}

	public abstract static class Base {

		public String get() {
			return "x";
		}

	}

	@RateLimited("a")
	public static class Users extends Base {

	}

	@RateLimited("b")
	public static class Orders extends Base {

	}

}
