package io.github.ratelimit.spring;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import org.junit.jupiter.api.Test;

import static io.github.ratelimit.spring.RateLimitEnforcerTests.IP;
import static io.github.ratelimit.spring.RateLimitEnforcerTests.enforcer;
import static io.github.ratelimit.spring.RateLimitEnforcerTests.policy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class AnnotationPoliciesTests {

	private static AnnotationPolicies annotations(List<ConfiguredPolicy> policies) {
		return new AnnotationPolicies(new RateLimitPolicyRegistry(policies), RateLimitEnforcerTests::noBeans,
				FailureMode.OPEN);
	}

	@Test
	void inlinePoliciesTakeTheirFailureModeOrTheApplicationDefault() throws NoSuchMethodException {
		AnnotationPolicies annotations = new AnnotationPolicies(new RateLimitPolicyRegistry(List.of()),
				RateLimitEnforcerTests::noBeans, FailureMode.LOCAL);
		Method defaulted = FailureModes.class.getDeclaredMethod("defaulted");
		Method closed = FailureModes.class.getDeclaredMethod("closed");
		assertThat(annotations.targets(defaulted, FailureModes.class).get(0).policy().policy().failureMode())
			.isEqualTo(FailureMode.LOCAL);
		assertThat(annotations.targets(closed, FailureModes.class).get(0).policy().policy().failureMode())
			.isEqualTo(FailureMode.CLOSED);
		Method invalid = FailureModes.class.getDeclaredMethod("invalid");
		assertThatIllegalStateException().isThrownBy(() -> annotations.targets(invalid, FailureModes.class))
			.withMessageContaining("FailureModes.invalid()")
			.withMessageContaining("failureMode takes one value, not 2");
	}

	@Test
	void inlineWindowsAreIsoSimpleOrCompositeDurationsAndPlainNumbersAreMilliseconds() throws NoSuchMethodException {
		AnnotationPolicies annotations = annotations(List.of());
		Method windows = Windows.class.getDeclaredMethod("windows");
		assertThat(annotations.targets(windows, Windows.class))
			.extracting((target) -> target.policy().policy().window())
			.containsExactly(Duration.ofMillis(500), Duration.ofMinutes(1), Duration.ofMinutes(90),
					Duration.ofSeconds(2), Duration.ofSeconds(3), Duration.ofSeconds(5));
		Method invalid = Windows.class.getDeclaredMethod("invalid");
		assertThatIllegalStateException().isThrownBy(() -> annotations.targets(invalid, Windows.class))
			.withMessageContaining("Windows.invalid()")
			.withMessageContaining("1.5s");
	}

	@Test
	void annotationsAreResolvedFromMethodAndClassAndValidated() throws Exception {
		ConfiguredPolicy perIp = ConfiguredPolicy.of(policy("per-ip", 10), IP, MissingKey.SHARED);
		RateLimitEnforcer enforcer = enforcer(List.of(perIp), List.of());
		Method search = Annotated.class.getMethod("search", String.class);
		List<RateLimitEnforcer.Target> targets = enforcer.annotationTargets(search, Annotated.class);
		assertThat(targets).extracting((target) -> target.policy().name()).containsExactly("per-ip", "search");
		RateLimitEnforcer.Target inline = targets.get(1);
		assertThat(inline.policy().policy().algorithm()).isEqualTo(Algorithm.GCRA);
		assertThat(inline.policy().policy().window()).isEqualTo(Duration.ofSeconds(2));
		assertThat(inline.cost()).isEqualTo(2);
		RateLimitDecision decision = enforcer
			.checkAsync(TestRequest.get("/search"), targets, search, new Object[] { "books" })
			.block();
		assertThat(decision.decisions()).extracting(PolicyDecision::identity).containsExactly("ip:198.51.100.4",
				KeySpec.parse("'q:' + #query", (name) -> null).identity("q:books"));
		assertThat(enforcer.annotationTargets(search, Annotated.class)).as("cached").isSameAs(targets);

		assertThatIllegalStateException()
			.isThrownBy(() -> enforcer.annotationTargets(Invalid.class.getMethod("unknown"), Invalid.class))
			.withMessageContaining("Invalid.unknown()")
			.withMessageContaining("unknown policy 'nope'");
		assertThatIllegalStateException()
			.isThrownBy(() -> enforcer.annotationTargets(Invalid.class.getMethod("badInline"), Invalid.class))
			.withMessageContaining("Invalid.badInline()")
			.withMessageContaining("limit must be between 1");
		assertThatIllegalStateException()
			.isThrownBy(() -> enforcer.annotationTargets(Invalid.class.getMethod("badKey"), Invalid.class))
			.withMessageContaining("invalid key");
		assertThatIllegalStateException()
			.isThrownBy(() -> enforcer.annotationTargets(Invalid.class.getMethod("nothing"), Invalid.class))
			.withMessageContaining("must name a configured policy");
	}

	@Test
	void inlinePoliciesAreRegisteredWhereTheEndpointAndTestsFindThem() throws Exception {
		ConfiguredPolicy perIp = ConfiguredPolicy.of(policy("per-ip", 10), IP, MissingKey.SHARED);
		RateLimitPolicyRegistry registry = new RateLimitPolicyRegistry(List.of(perIp));
		AnnotationPolicies annotations = new AnnotationPolicies(registry, RateLimitEnforcerTests::noBeans,
				FailureMode.OPEN);
		assertThat(registry.find("search")).isNull();
		annotations.targets(Annotated.class.getMethod("search", String.class), Annotated.class);
		ConfiguredPolicy search = registry.find("search");
		assertThat(search).isNotNull();
		assertThat(search.key().source()).as("the annotation's key is the inline policy's own").startsWith("el.");
		assertThat(registry.all()).extracting(ConfiguredPolicy::name).containsExactly("per-ip", "search");
		assertThat(registry.contains("search")).as("not a configured policy").isFalse();
	}

	@Test
	void classLevelPoliciesOfSubclassesDoNotLeakThroughAnInheritedMethod() throws Exception {
		AnnotationPolicies annotations = annotations(
				List.of(ConfiguredPolicy.of(policy("a", 5), IP, MissingKey.SHARED),
						ConfiguredPolicy.of(policy("b", 5), IP, MissingKey.SHARED)));
		Method get = Base.class.getMethod("get");
		assertThat(annotations.targets(get, Users.class)).extracting((t) -> t.policy().name()).containsExactly("a");
		assertThat(annotations.targets(get, Orders.class)).extracting((t) -> t.policy().name()).containsExactly("b");
	}

	static class Windows {

		@RateLimited(name = "simple", algorithm = Algorithm.GCRA, limit = 5, window = "500ms")
		@RateLimited(name = "iso", algorithm = Algorithm.GCRA, limit = 5, window = "PT1M")
		@RateLimited(name = "composite", algorithm = Algorithm.GCRA, limit = 5, window = "1h30m")
		@RateLimited(name = "millis", algorithm = Algorithm.GCRA, limit = 5, window = "2000")
		@RateLimited(name = "padded", algorithm = Algorithm.GCRA, limit = 5, window = " 3s ")
		@RateLimited(name = "upper", algorithm = Algorithm.GCRA, limit = 5, window = "5S")
		void windows() {
		}

		@RateLimited(name = "invalid", algorithm = Algorithm.GCRA, limit = 5, window = "1.5s")
		void invalid() {
		}

	}

	static class FailureModes {

		@RateLimited(name = "defaulted", algorithm = Algorithm.GCRA, limit = 5, window = "1m")
		void defaulted() {
		}

		@RateLimited(name = "closed", algorithm = Algorithm.GCRA, limit = 5, window = "1m",
				failureMode = FailureMode.CLOSED)
		void closed() {
		}

		@RateLimited(name = "invalid", algorithm = Algorithm.GCRA, limit = 5, window = "1m",
				failureMode = { FailureMode.OPEN, FailureMode.CLOSED })
		void invalid() {
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

	@RateLimited("per-ip")
	static class Annotated {

		@RateLimited(name = "search", algorithm = Algorithm.GCRA, limit = 5, window = "2s", key = "'q:' + #query",
				cost = 2)
		public String search(String query) {
			return query;
		}

	}

	static class Invalid {

		@RateLimited("nope")
		public void unknown() {
		}

		@RateLimited(name = "inline", algorithm = Algorithm.GCRA, limit = 0, window = "1s")
		public void badInline() {
		}

		@RateLimited(name = "inline", algorithm = Algorithm.GCRA, limit = 1, window = "1s", key = "#request.header(")
		public void badKey() {
		}

		@RateLimited
		public void nothing() {
		}

	}

}
