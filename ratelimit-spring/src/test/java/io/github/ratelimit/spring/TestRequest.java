package io.github.ratelimit.spring;

import java.security.Principal;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * A plain request for tests of the web-neutral classes.
 */
record TestRequest(String method, String path, @Nullable String remoteAddress, Map<String, String> headers,
		@Nullable Principal principal) implements RequestContext {

	static TestRequest get(String path) {
		return new TestRequest("GET", path, "198.51.100.4", Map.of(), null);
	}

	TestRequest withHeader(String name, String value) {
		java.util.Map<String, String> headers = new java.util.HashMap<>(this.headers);
		headers.put(name, value);
		return new TestRequest(this.method, this.path, this.remoteAddress, headers, this.principal);
	}

	TestRequest withRemoteAddress(String address) {
		return new TestRequest(this.method, this.path, address, this.headers, this.principal);
	}

	TestRequest withPrincipal(String name) {
		return new TestRequest(this.method, this.path, this.remoteAddress, this.headers, () -> name);
	}

	@Override
	public @Nullable String header(String name) {
		return this.headers.entrySet()
			.stream()
			.filter((entry) -> entry.getKey().equalsIgnoreCase(name))
			.map(Map.Entry::getValue)
			.findFirst()
			.orElse(null);
	}

	@Override
	public @Nullable Object attribute(String name) {
		return null;
	}

	@Override
	public Object nativeRequest() {
		return this;
	}

}
