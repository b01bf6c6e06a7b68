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

	@Test
	void identitiesAreQualifiedBySourceSoNoValueOfOneSourceMimicsAnother() {
		TestRequest request = TestRequest.get("/").withHeader("X-Api-Key", "ip:198.51.100.4").withPrincipal("anonymous");
		KeySpec ip = parse("ip");
		KeySpec apiKey = parse("header:X-Api-Key");
		String byIp = ip.identity(ip.resolve(request));
		String byHeader = apiKey.identity(apiKey.resolve(request));
		assertThat(byIp).isEqualTo("ip:198.51.100.4");
		assertThat(byHeader).isEqualTo("header.x-api-key:ip:198.51.100.4").isNotEqualTo(byIp);
		assertThat(parse("header:x-api-key").identity("k")).as("one header, one source").isEqualTo(apiKey.identity("k"));
		assertThat(parse("principal").identity("anonymous")).isNotEqualTo(MissingKey.ANONYMOUS);
		assertThat(apiKey.identity("anonymous")).isNotEqualTo(MissingKey.ANONYMOUS);
		assertThat(parse("#p0").identity("x")).isNotEqualTo(parse("#p1").identity("x")).startsWith("el.");
		assertThat(parse("@tenant").identity("acme")).isEqualTo("bean.tenant:acme");
		assertThat(parse("global").identity("global")).isEqualTo(KeySpec.GLOBAL);
	}

	@Test
	void everySourceAKeyHasIsASourceAndQualifiesAValueAsTheKeyDoes() {
		for (String spec : new String[] { "ip", "principal", "global", "header:X-Api-Key", "header:x~weird!", "@tenant",
				"#p0", "#request.header('X-Tenant').toLowerCase()" }) {
			KeySpec key = parse(spec);
			assertThat(KeySpec.isSource(key.source())).as(spec).isTrue();
			assertThat(KeySpec.identity(key.source(), "v:1")).as(spec).isEqualTo(key.identity("v:1"));
		}
		for (String text : new String[] { "", "anonymous", "IP", "header.X-Api-Key", "header.", "header.a b",
				"bean.", "bean.a:b", "bean.a b", "el.1a2b3c4", "el.1A2B3C4D", "el.1a2b3c4d5", "ip:1.2.3.4", "ip " }) {
			assertThat(KeySpec.isSource(text)).as(text).isFalse();
		}
	}

	@Test
	void ipKeyGroupsIpv6ByPrefixAndMappedAddressesAsIpv4() {
		KeySpec ip = parse("ip");
		TestRequest request = TestRequest.get("/");
		assertThat(ip.resolve(request.withRemoteAddress("2001:db8:1:2:aaaa::1")))
			.isEqualTo(ip.resolve(request.withRemoteAddress("2001:db8:1:2:ffff:ffff:ffff:fffe")))
			.isEqualTo("2001:db8:1:2::/64");
		assertThat(ip.resolve(request.withRemoteAddress("2001:db8:1:3::1"))).isEqualTo("2001:db8:1:3::/64");
		assertThat(ip.resolve(request.withRemoteAddress("[2001:db8:1:2::9%eth0]"))).isEqualTo("2001:db8:1:2::/64");
		assertThat(ip.resolve(request.withRemoteAddress("::ffff:192.0.2.1"))).isEqualTo("192.0.2.1");
		assertThat(ip.resolve(request.withRemoteAddress("192.0.2.1"))).isEqualTo("192.0.2.1");
		assertThat(ip.resolve(request.withRemoteAddress("unknown"))).as("no name is looked up").isEqualTo("unknown");
		KeySpec.Resolvers prefixes = new KeySpec.Resolvers() {

			@Override
			public KeyResolver apply(String name) {
				throw new IllegalArgumentException(name);
			}

			@Override
			public KeySpec.IpPrefixes ipPrefixes() {
				return new KeySpec.IpPrefixes(24, 48);
			}

		};
		KeySpec grouped = KeySpec.parse("ip", prefixes);
		assertThat(grouped.resolve(request.withRemoteAddress("192.0.2.77"))).isEqualTo("192.0.2.0/24");
		assertThat(grouped.resolve(request.withRemoteAddress("2001:db8:1:2::1"))).isEqualTo("2001:db8:1::/48");
		assertThat(new KeySpec.IpPrefixes(32, 128).group("2001:db8::1")).isEqualTo("2001:db8:0:0:0:0:0:1");
		assertThat(new KeySpec.IpPrefixes(32, 1).group("::1")).isEqualTo("::/1");
		assertThatIllegalArgumentException().isThrownBy(() -> new KeySpec.IpPrefixes(33, 64)).withMessageContaining("IPv4");
	}

	@Test
	void fullLengthIpv4GroupsAsParsingAndFormattingWouldHave() {
		// the shortcut for a canonical dotted quad must give what InetAddress gives, and leave everything else to it
		for (String canonical : new String[] { "0.0.0.0", "127.0.0.1", "192.0.2.1", "255.255.255.255", "10.20.3.40" }) {
			assertThat(KeySpec.IpPrefixes.isCanonicalIpv4(canonical)).as(canonical).isTrue();
			assertThat(KeySpec.IpPrefixes.DEFAULT.group(canonical)).isEqualTo(canonical);
		}
		for (String other : new String[] { "", "1.2.3", "1.2.3.4.5", "1.2.3.4.", ".1.2.3", "256.1.1.1", "01.2.3.4",
				"1.2.3.a", "1..3.4", "1234.1.1.1", "::1", "[1.2.3.4]", "1.2.3.4%eth0", "unknown" }) {
			assertThat(KeySpec.IpPrefixes.isCanonicalIpv4(other)).as(other).isFalse();
		}
		assertThat(KeySpec.IpPrefixes.DEFAULT.group("256.1.1.1")).isEqualTo("256.1.1.1");
	}

	@Test
	void tierKeysSeeOnlyTrustedData() {
		TestRequest request = TestRequest.get("/").withHeader("X-Tier", "gold").withPrincipal("pro-user");
		assertThat(KeySpec.parseTier("#principal?.name", (name) -> TENANT).resolve(request)).isEqualTo("pro-user");
		assertThat(KeySpec.parseTier("principal.name", (name) -> TENANT).resolve(request)).isEqualTo("pro-user");
		assertThat(KeySpec.parseTier("attribute('tier')", (name) -> TENANT).resolve(request)).isNull();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> KeySpec.parseTier("#request.header('X-Tier')", (name) -> TENANT))
			.withMessageContaining("never from a value the client sets");
		assertThatIllegalArgumentException().isThrownBy(() -> KeySpec.parseTier("header:X-Tier", (name) -> TENANT))
			.withMessageContaining("never from a value the client sets");
		assertThatIllegalArgumentException().isThrownBy(() -> KeySpec.parseTier("ip", (name) -> TENANT))
			.withMessageContaining("not a tier");
		assertThatIllegalStateException()
			.isThrownBy(() -> KeySpec.parseTier("header('X-Tier')", (name) -> TENANT).resolve(request))
			.as("the root object has no header method")
			.withMessageContaining("header('X-Tier')");
	}

	@SuppressWarnings("unused")
	private static void order(String tenant, int quantity) {
	}

	@Test
	void testRequestHeadersAreCaseInsensitive() {
		assertThat(new TestRequest("GET", "/", null, Map.of("A", "1"), null).header("a")).isEqualTo("1");
	}

}
