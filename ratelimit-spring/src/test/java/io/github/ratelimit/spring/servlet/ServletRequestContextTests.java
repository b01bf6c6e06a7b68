package io.github.ratelimit.spring.servlet;

import java.security.Principal;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;

class ServletRequestContextTests {

	@Test
	void remoteAddressIsThePeerAddressAndNeverAForwardedHeader() {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/api/orders");
		request.setRemoteAddr("192.0.2.10");
		request.addHeader("X-Forwarded-For", "203.0.113.7");
		request.addHeader("Forwarded", "for=203.0.113.8");
		request.addHeader("X-Real-IP", "203.0.113.9");
		assertThat(new ServletRequestContext(request).remoteAddress()).isEqualTo("192.0.2.10");
	}

	@Test
	void pathIsWithinTheApplicationAndStaysEncoded() {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/shop/api/orders/a%20b");
		request.setContextPath("/shop");
		ServletRequestContext context = new ServletRequestContext(request);
		assertThat(context.path()).isEqualTo("/api/orders/a%20b");
		assertThat(context.method()).isEqualTo("GET");
		assertThat(ServletRequestContext.pathWithinApplication(request)).isEqualTo("/api/orders/a%20b");
		assertThat(context.requestPath()).as("the problem's instance names the full path")
			.isEqualTo("/shop/api/orders/a%20b");
	}

	@Test
	void pathWithoutContextPathIsTheRequestUri() {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/login");
		assertThat(new ServletRequestContext(request).path()).isEqualTo("/login");
	}

	@Test
	void exposesHeadersPrincipalAttributesAndTheNativeRequest() {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/");
		request.addHeader("X-Api-Key", "key-1");
		request.addHeader("X-Api-Key", "key-2");
		Principal principal = () -> "alice";
		request.setUserPrincipal(principal);
		request.setAttribute("tenant", "acme");
		ServletRequestContext context = new ServletRequestContext(request);
		assertThat(context.header("X-Api-Key")).isEqualTo("key-1");
		assertThat(context.header("x-api-key")).isEqualTo("key-1");
		assertThat(context.header("Missing")).isNull();
		assertThat(context.principal()).isSameAs(principal);
		assertThat(context.attribute("tenant")).isEqualTo("acme");
		assertThat(context.nativeRequest()).isSameAs(request);
	}

	@Test
	void withoutPrincipalOrAddressTheyAreNull() {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/");
		request.setRemoteAddr(null);
		ServletRequestContext context = new ServletRequestContext(request);
		assertThat(context.principal()).isNull();
		assertThat(context.remoteAddress()).isNull();
	}

}
