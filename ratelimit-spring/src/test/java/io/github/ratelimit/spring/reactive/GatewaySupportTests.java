package io.github.ratelimit.spring.reactive;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.ratelimit.spring.RequestContext;
import org.junit.jupiter.api.Test;

import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the gateway module gets of an exchange: its request context, and its permits held until its response ends.
 */
class GatewaySupportTests {

	private final List<String> events = new CopyOnWriteArrayList<>();

	private final MockServerWebExchange exchange = MockServerWebExchange
		.from(MockServerHttpRequest.get("/api/items").header("X-Api-Key", "k-1"));

	@Test
	void theExchangeIsTheRequestContext() {
		RequestContext request = new GatewaySupport(this.exchange).request().block();
		assertThat(request).isNotNull();
		assertThat(request.method()).isEqualTo("GET");
		assertThat(request.path()).isEqualTo("/api/items");
		assertThat(request.header("X-Api-Key")).isEqualTo("k-1");
		assertThat(request.nativeRequest()).isSameAs(this.exchange);
	}

	@Test
	void heldPermitsAreReleasedBeforeTheResponseCompletes() {
		GatewaySupport support = new GatewaySupport(this.exchange);
		support.hold(new RateLimitWebFilterTests.RecordingPermit(this.events)).block();
		ServerHttpResponse response = support.releasing(this.exchange.getResponse());
		assertThat(this.events).isEmpty();
		response.setComplete().block();
		assertThat(this.events).containsExactly("released");
		assertThat(support.isReleased()).isTrue();
	}

	@Test
	void aPermitHeldAfterTheReleaseIsReleasedAtOnce() {
		GatewaySupport support = new GatewaySupport(this.exchange);
		support.release().block();
		support.hold(new RateLimitWebFilterTests.RecordingPermit(this.events)).block();
		assertThat(this.events).containsExactly("released");
	}

}
