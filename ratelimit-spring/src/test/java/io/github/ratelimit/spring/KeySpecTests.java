package io.github.ratelimit.spring;

import java.lang.reflect.Method;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class KeySpecTests {

	private static final KeyResolver TENANT = (request) -> request.header("X-Tenant");

	private static KeySpec parse(String spec) {
		return KeySpec.parse(spec, (name) -> {
			if (name.equals("tenant")) {
				return TENANT;
			}
			throw new IllegalArgumentException("no KeyResolver bean named '" + name + "'");
		});
	}

	@Test
	void builtInKeys() {
		TestRequest request = TestRequest.get("/").withHeader("X-Api-Key", "k-1").withPrincipal("alice");
		assertThat(parse("ip").resolve(request)).isEqualTo("198.51.100.4");
		assertThat(parse("header:X-Api-Key").resolve(request)).isEqualTo("k-1");
		assertThat(parse("header:x-api-key").resolve(request)).as("header names are case-insensitive").isEqualTo("k-1");
		assertThat(parse("principal").resolve(request)).isEqualTo("alice");
		assertThat(parse("global").resolve(request)).isEqualTo("global");
		assertThat(parse("@tenant").resolve(request.withHeader("X-Tenant", "acme"))).isEqualTo("acme");
	}

	@Test
	void missingValuesResolveToNull() {
		TestRequest request = TestRequest.get("/");
		assertThat(parse("principal").resolve(request)).isNull();
		assertThat(parse("header:X-Api-Key").resolve(request)).isNull();
		assertThat(parse("header:X-Api-Key").resolve(request.withHeader("X-Api-Key", ""))).as("empty is missing").isNull();
		assertThat(parse("#principal?.name").resolve(request)).isNull();
	}

	@Test
	void spelSeesTheRequestThePrincipalAndMethodParameters() throws Exception {
		TestRequest request = TestRequest.get("/orders/7").withHeader("X-Tenant", "acme").withPrincipal("bob");
		assertThat(parse("#request.header('X-Tenant') + ':' + #principal.name").resolve(request)).isEqualTo("acme:bob");
		assertThat(parse("path").resolve(request)).as("the request is the root object").isEqualTo("/orders/7");
		Method method = KeySpecTests.class.getDeclaredMethod("order", String.class, int.class);
		assertThat(parse("#tenant + '/' + #quantity").resolve(request, method, new Object[] { "t9", 3 }))
			.isEqualTo("t9/3");
		assertThat(parse("#p0").resolve(request, method, new Object[] { "t9", 3 })).isEqualTo("t9");
	}

	@Test
	void spelCannotReachTypesOrBeans() {
		TestRequest request = TestRequest.get("/");
		assertThatIllegalStateException().isThrownBy(() -> parse("T(java.lang.System).exit(1)").resolve(request))
			.withMessageContaining("T(java.lang.System).exit(1)");
		assertThatIllegalStateException().isThrownBy(() -> parse("new java.io.File('/')").resolve(request));
	}

	@Test
	void invalidSpecsAreRejectedWithTheReason() {
		assertThatIllegalArgumentException().isThrownBy(() -> parse("#request.header('x'")).withMessageContaining("SpEL");
		assertThatIllegalArgumentException().isThrownBy(() -> parse("header:")).withMessageContaining("header");
		assertThatIllegalArgumentException().isThrownBy(() -> parse("header:X Y")).withMessageContaining("header");
		assertThatIllegalArgumentException().isThrownBy(() -> parse("@missing")).withMessageContaining("missing");
		assertThatIllegalArgumentException().isThrownBy(() -> parse(" ")).withMessageContaining("empty");
	}

	@SuppressWarnings("unused")
	private static void order(String tenant, int quantity) {
	}

	@Test
	void testRequestHeadersAreCaseInsensitive() {
		assertThat(new TestRequest("GET", "/", null, Map.of("A", "1"), null).header("a")).isEqualTo("1");
	}

}
