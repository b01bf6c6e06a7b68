package io.github.ratelimit.spring;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The post-processor proxies every bean whose methods the enforcer finds annotated: on interface methods and
 * through meta-annotations too.
 */
class RateLimitedMethodPostProcessorTests {

	private static KeyResolver noBeans(String name) {
		throw new IllegalArgumentException("no KeyResolver bean named '" + name + "'");
	}

	@Test
	void annotationsOnInterfaceMethodsAndMetaAnnotationsAreIntercepted() throws Exception {
		ConfiguredPolicy a = ConfiguredPolicy.of(RateLimitPolicy.builder("a")
			.algorithm(Algorithm.FIXED_WINDOW)
			.limit(5)
			.window(Duration.ofMinutes(1))
			.build(), KeySpec.parse("ip", RateLimitedMethodPostProcessorTests::noBeans), MissingKey.SHARED);
		RateLimitEnforcer enforcer = new RateLimitEnforcer(new DefaultRateLimiter(new LocalRateLimitBackend()),
				new RateLimitPolicyRegistry(List.of(a)), List.of(), RateLimitedMethodPostProcessorTests::noBeans,
				FailureMode.OPEN);
		RateLimitedMethodPostProcessor postProcessor = new RateLimitedMethodPostProcessor(() -> enforcer,
				(invocation) -> "intercepted") {
		};
		postProcessor.setBeanFactory(new DefaultListableBeanFactory());
		Object viaInterface = postProcessor.postProcessAfterInitialization(new Implementation(), "implementation");
		assertThat(AopUtils.isAopProxy(viaInterface)).isTrue();
		assertThat(((Api) viaInterface).viaInterface()).isEqualTo("intercepted");
		Object viaMeta = postProcessor.postProcessAfterInitialization(new MetaAnnotated(), "meta");
		assertThat(AopUtils.isAopProxy(viaMeta)).isTrue();
		assertThat(enforcer.annotationTargets(MetaAnnotated.class.getMethod("search"), MetaAnnotated.class))
			.extracting((target) -> target.policy().name())
			.containsExactly("a");
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

}
