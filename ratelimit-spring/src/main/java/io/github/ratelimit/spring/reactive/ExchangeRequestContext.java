package io.github.ratelimit.spring.reactive;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.Principal;

import io.github.ratelimit.spring.RequestContext;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/** A {@link RequestContext} over a {@link ServerWebExchange}, its principal resolved before (a {@code Mono}). */
final class ExchangeRequestContext implements RequestContext {

	private final ServerWebExchange exchange;

	private final @Nullable Principal principal;

	/** The context of an exchange, once its principal (if any) is resolved. */
	static Mono<RequestContext> resolve(ServerWebExchange exchange) {
		return exchange.getPrincipal()
			.<RequestContext>map((principal) -> new ExchangeRequestContext(exchange, principal))
			.switchIfEmpty(Mono.fromSupplier(() -> new ExchangeRequestContext(exchange, null)));
	}

	ExchangeRequestContext(ServerWebExchange exchange, @Nullable Principal principal) {
		this.exchange = exchange;
		this.principal = principal;
	}

	@Override
	public String method() {
		return this.exchange.getRequest().getMethod().name();
	}

	@Override
	public String path() {
		return this.exchange.getRequest().getPath().pathWithinApplication().value();
	}

	/** The peer address, or what forwarded-header handling made of it: an unresolved address as a literal (no DNS). */
	@Override
	public @Nullable String remoteAddress() {
		InetSocketAddress address = this.exchange.getRequest().getRemoteAddress();
		if (address == null) {
			return null;
		}
		InetAddress resolved = address.getAddress();
		if (resolved != null) {
			return resolved.getHostAddress();
		}
		String host = address.getHostString();
		if (host.length() > 2 && host.charAt(0) == '[' && host.charAt(host.length() - 1) == ']') {
			return host.substring(1, host.length() - 1);
		}
		return host.isEmpty() ? null : host;
	}

	@Override
	public @Nullable String header(String name) {
		return this.exchange.getRequest().getHeaders().getFirst(name);
	}

	@Override
	public @Nullable Principal principal() {
		return this.principal;
	}

	@Override
	public @Nullable Object attribute(String name) {
		return this.exchange.getAttribute(name);
	}

	@Override
	public Object nativeRequest() {
		return this.exchange;
	}

	@Override
	public String requestPath() {
		return this.exchange.getRequest().getPath().value();
	}

	@Override
	public String toString() {
		return "ExchangeRequestContext[" + method() + " " + path() + "]";
	}

}
