package io.github.ratelimit.spring;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.DefaultRateLimiter;
import io.github.ratelimit.core.FailureMode;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.local.LocalRateLimitBackend;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class RateLimitEnforcerTests {

	private static final KeySpec IP = KeySpec.parse("ip", RateLimitEnforcerTests::noBeans);

	private static final KeySpec API_KEY = KeySpec.parse("header:X-Api-Key", RateLimitEnforcerTests::noBeans);

	private static KeyResolver noBeans(String name) {
		throw new IllegalArgumentException("no KeyResolver bean named '" + name + "'");
	}

	private static RateLimitPolicy policy(String name, long limit) {
		return RateLimitPolicy.builder(name).algorithm(Algorithm.FIXED_WINDOW).limit(limit).window(Duration.ofMinutes(1)).build();
	}

	private static RateLimitEnforcer enforcer(List<ConfiguredPolicy> policies, List<RateLimitRule> rules) {
		return new RateLimitEnforcer(new DefaultRateLimiter(new LocalRateLimitBackend()),
				new RateLimitPolicyRegistry(policies), rules,
				RateLimitHeaders.ALL, new ProblemDetailRejectionHandler(), RateLimitEnforcerTests::noBeans,
				System::currentTimeMillis);
	}

	@Test
	void rulesMatchPathsAndMethodsAndListEachPolicyOnce() {
		ConfiguredPolicy perIp = ConfiguredPolicy.of(policy("per-ip", 10), IP, MissingKey.SHARED);
		ConfiguredPolicy writes = ConfiguredPolicy.of(policy("writes", 2), IP, MissingKey.SHARED);
		RateLimitEnforcer enforcer = enforcer(List.of(perIp, writes),
				List.of(RateLimitRule.of(List.of("/api/**"), Set.of(), List.of("per-ip")),
						RateLimitRule.of(List.of("/api/orders/{id}", "/api/carts/**"), Set.of("post", "PUT"),
								List.of("writes", "per-ip"))));
		assertThat(names(enforcer.ruleTargets("GET", "/api/orders/1"))).containsExactly("per-ip");
		assertThat(names(enforcer.ruleTargets("POST", "/api/orders/1"))).containsExactly("per-ip", "writes");
		assertThat(names(enforcer.ruleTargets("put", "/api/carts/9/items"))).containsExactly("per-ip", "writes");
		assertThat(enforcer.ruleTargets("GET", "/health")).isEmpty();
	}

	@Test
	void inlinePoliciesTakeTheirFailureModeOrTheApplicationDefault() throws NoSuchMethodException {
		RateLimitEnforcer enforcer = new RateLimitEnforcer(new DefaultRateLimiter(new LocalRateLimitBackend()),
				new RateLimitPolicyRegistry(List.of()), List.of(), RateLimitHeaders.ALL,
				new ProblemDetailRejectionHandler(), RateLimitEnforcerTests::noBeans, System::currentTimeMillis,
				FailureMode.LOCAL);
		Method defaulted = FailureModes.class.getDeclaredMethod("defaulted");
		Method closed = FailureModes.class.getDeclaredMethod("closed");
		assertThat(enforcer.annotationTargets(defaulted, FailureModes.class).get(0).policy().policy().failureMode())
			.isEqualTo(FailureMode.LOCAL);
		assertThat(enforcer.annotationTargets(closed, FailureModes.class).get(0).policy().policy().failureMode())
			.isEqualTo(FailureMode.CLOSED);
		Method invalid = FailureModes.class.getDeclaredMethod("invalid");
		assertThatIllegalStateException().isThrownBy(() -> enforcer.annotationTargets(invalid, FailureModes.class))
			.withMessageContaining("FailureModes.invalid()")
			.withMessageContaining("failureMode takes one value, not 2");
	}

	@Test
	void inlineWindowsAreIsoSimpleOrCompositeDurationsAndPlainNumbersAreMilliseconds() throws NoSuchMethodException {
		RateLimitEnforcer enforcer = enforcer(List.of(), List.of());
		Method windows = Windows.class.getDeclaredMethod("windows");
		assertThat(enforcer.annotationTargets(windows, Windows.class))
			.extracting((target) -> target.policy().policy().window())
			.containsExactly(Duration.ofMillis(500), Duration.ofMinutes(1), Duration.ofMinutes(90),
					Duration.ofSeconds(2), Duration.ofSeconds(3), Duration.ofSeconds(5));
		Method invalid = Windows.class.getDeclaredMethod("invalid");
		assertThatIllegalStateException().isThrownBy(() -> enforcer.annotationTargets(invalid, Windows.class))
			.withMessageContaining("Windows.invalid()")
			.withMessageContaining("1.5s");
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

	@Test
	void rulesNamingUnknownPoliciesAreRejected() {
		// the auto-configuration names the property (ratelimit.filter.rules[i].policies) before it builds an enforcer
		assertThatIllegalArgumentException()
			.isThrownBy(() -> enforcer(List.of(), List.of(RateLimitRule.of(List.of("/**"), Set.of(), List.of("nope")))))
			.withMessageContaining("'nope'");
	}

	@Test
	void missingKeysAreSharedSkippedOrDeniedAsConfigured() {
		ConfiguredPolicy shared = ConfiguredPolicy.of(policy("shared", 2), API_KEY, MissingKey.SHARED);
		ConfiguredPolicy skip = ConfiguredPolicy.of(policy("skip", 2), API_KEY, MissingKey.SKIP);
		ConfiguredPolicy deny = ConfiguredPolicy.of(policy("deny", 2), API_KEY, MissingKey.DENY);
		RateLimitEnforcer enforcer = enforcer(List.of(shared, skip, deny), List.of());
		TestRequest anonymous = TestRequest.get("/");
		RateLimitDecision sharedDecision = check(enforcer, anonymous, shared);
		assertThat(sharedDecision.decisions().get(0).identity()).isEqualTo(MissingKey.ANONYMOUS);
		check(enforcer, anonymous.withHeader("Ignored", "x"), shared);
		assertThat(check(enforcer, anonymous, shared).allowed()).as("all keyless requests share one quota").isFalse();
		assertThat(check(enforcer, anonymous.withHeader("X-Api-Key", "k"), shared).allowed()).isTrue();

		RateLimitDecision skipped = check(enforcer, anonymous, skip);
		assertThat(skipped.allowed()).isTrue();
		assertThat(skipped.decisions()).isEmpty();

		RateLimitDecision denied = check(enforcer, anonymous, deny);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.decisions()).singleElement().satisfies((decision) -> {
			assertThat(MissingKey.isDenial(decision)).isTrue();
			assertThat(MissingKey.source(decision)).isEqualTo("header.x-api-key");
		});
		assertThat(RateLimitHeaders.ALL.of(denied, 0).isEmpty()).as("a missing key is no quota to wait for").isTrue();
		assertThat(check(enforcer, anonymous.withHeader("X-Api-Key", "k"), deny).allowed()).isTrue();
	}

	@Test
	void overridesAndTiersReplaceTheLimitsOfSpecificKeys() {
		RateLimitPolicy base = policy("api", 1);
		ConfiguredPolicy api = new ConfiguredPolicy(base, API_KEY, MissingKey.SHARED,
				Map.of("enterprise-key", base.toBuilder().limit(5).build()),
				KeySpec.parse("#principal?.name == 'gold-user' ? 'gold' : null", RateLimitEnforcerTests::noBeans),
				Map.of("gold", base.toBuilder().limit(3).build()));
		RateLimitEnforcer enforcer = enforcer(List.of(api), List.of());
		assertThat(check(enforcer, TestRequest.get("/").withHeader("X-Api-Key", "enterprise-key"), api)
			.decisions().get(0).limit()).isEqualTo(5);
		assertThat(check(enforcer, TestRequest.get("/").withHeader("X-Api-Key", "k2").withPrincipal("gold-user"), api)
			.decisions().get(0).limit()).isEqualTo(3);
		assertThat(check(enforcer, TestRequest.get("/").withHeader("X-Api-Key", "k3").withPrincipal("someone"), api)
			.decisions().get(0).limit()).isEqualTo(1);
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
		RateLimitDecision decision = enforcer.check(TestRequest.get("/search"), targets, search, new Object[] { "books" });
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
		RateLimitEnforcer enforcer = new RateLimitEnforcer(new DefaultRateLimiter(new LocalRateLimitBackend()),
				registry, List.of(), RateLimitHeaders.ALL, new ProblemDetailRejectionHandler(),
				RateLimitEnforcerTests::noBeans, System::currentTimeMillis);
		assertThat(registry.find("search")).isNull();
		enforcer.annotationTargets(Annotated.class.getMethod("search", String.class), Annotated.class);
		ConfiguredPolicy search = registry.find("search");
		assertThat(search).isNotNull();
		assertThat(search.key().source()).as("the annotation's key is the inline policy's own").startsWith("el.");
		assertThat(registry.all()).extracting(ConfiguredPolicy::name).containsExactly("per-ip", "search");
		assertThat(registry.contains("search")).as("not a configured policy").isFalse();
	}

	private static RateLimitDecision check(RateLimitEnforcer enforcer, RequestContext request,
			ConfiguredPolicy policy) {
		return enforcer.check(request, List.of(new RateLimitEnforcer.Target(policy, null, 0)), null, null);
	}

	private static List<String> names(List<RateLimitEnforcer.Target> targets) {
		return targets.stream().map((target) -> target.policy().name()).toList();
	}

	@Test
	void classLevelPoliciesOfSubclassesDoNotLeakThroughAnInheritedMethod() throws Exception {
		RateLimitEnforcer enforcer = enforcer(
				List.of(ConfiguredPolicy.of(policy("a", 5), IP, MissingKey.SHARED),
						ConfiguredPolicy.of(policy("b", 5), IP, MissingKey.SHARED)),
				List.of());
		Method get = Base.class.getMethod("get");
		assertThat(enforcer.annotationTargets(get, Users.class)).extracting((t) -> t.policy().name()).containsExactly("a");
		assertThat(enforcer.annotationTargets(get, Orders.class)).extracting((t) -> t.policy().name()).containsExactly("b");
	}

	@Test
	void headIsCoveredByGetRulesAndDoubledSlashesMatchAsSingleOnes() {
		RateLimitEnforcer enforcer = enforcer(List.of(ConfiguredPolicy.of(policy("p", 5), IP, MissingKey.SHARED)),
				List.of(RateLimitRule.of(List.of("/api/**"), Set.of("GET"), List.of("p"))));
		assertThat(enforcer.ruleTargets("HEAD", "/api/hello")).hasSize(1);
		assertThat(enforcer.ruleTargets("POST", "/api/hello")).isEmpty();
		assertThat(enforcer.ruleTargets("GET", "//api//hello")).hasSize(1);
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
