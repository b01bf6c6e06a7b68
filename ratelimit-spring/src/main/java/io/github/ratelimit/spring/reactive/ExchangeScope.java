package io.github.ratelimit.spring.reactive;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.ratelimit.core.Permit;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.spring.RateLimitEnforcer;
import io.github.ratelimit.spring.Rejection;
import io.github.ratelimit.spring.RequestContext;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;

/**
 * What the rate limiter knows of one exchange: its {@link RequestContext}, the decisions made for it (the filter
 * rules', then the {@code @RateLimited} methods') and the concurrency permits it holds. The reactive mirror of the
 * servlet side's request scope, found under one internal exchange attribute.
 * <p>
 * The {@link RateLimitWebFilter} opens one per exchange, puts it into the Reactor context of the rest of the chain
 * (so {@code @RateLimited} methods find it when their result is subscribed to) and {@link #close() closes} it when
 * the exchange completes, errors or is cancelled, releasing every permit recorded by then. A decision recorded after
 * that (a check still in flight when the client went away) has its permit released at once.
 */
final class ExchangeScope {

	private static final Log logger = LogFactory.getLog(ExchangeScope.class);

	/** Reactor context key and exchange attribute under which the scope is found. */
	static final String KEY = ExchangeScope.class.getName();

	private final ServerWebExchange exchange;

	private final RequestContext request;

	private final boolean filterOwned;

	private final List<RateLimitDecision> decisions = new CopyOnWriteArrayList<>();

	private final HeldPermits permits = new HeldPermits();

	private ExchangeScope(ServerWebExchange exchange, RequestContext request, boolean filterOwned) {
		this.exchange = exchange;
		this.request = request;
		this.filterOwned = filterOwned;
	}

	/** Makes this the exchange's scope, unless another got there first: returns the exchange's scope. */
	private ExchangeScope attach(boolean replace) {
		Map<String, Object> attributes = this.exchange.getAttributes();
		if (!replace) {
			Object existing = attributes.putIfAbsent(KEY, this);
			if (existing instanceof ExchangeScope scope) {
				return scope;
			}
		}
		attributes.put(KEY, this);
		return this;
	}

	/**
	 * Opens the scope of an exchange the {@link RateLimitWebFilter} handles; the filter closes it.
	 * @param exchange the exchange
	 * @param request its request context
	 * @return the scope
	 */
	static ExchangeScope open(ServerWebExchange exchange, RequestContext request) {
		return new ExchangeScope(exchange, request, true).attach(true);
	}

	/**
	 * The scope of the exchange a subscription runs for: the filter's, from the Reactor context; without the filter
	 * (say {@code ratelimit.filter.enabled=false}), one made from the exchange that Spring's
	 * {@link ServerWebExchangeContextFilter} puts into the context. Such a scope is never closed by a filter: the
	 * caller releases what it takes.
	 * @param context the subscriber's context
	 * @return the scope, or an error when the subscription does not run for an exchange
	 */
	/**
	 * Whether a subscription happens within a WebFlux exchange: one that went through the filter, or one that
	 * Spring's {@code ServerWebExchangeContextFilter} put into the Reactor context.
	 * @param context the subscriber's context
	 * @return true when {@link #current} finds the exchange
	 */
	static boolean isPresent(ContextView context) {
		return context.hasKey(KEY) || ServerWebExchangeContextFilter.getExchange(context).isPresent();
	}

	static Mono<ExchangeScope> current(ContextView context) {
		ExchangeScope scope = context.getOrDefault(KEY, null);
		if (scope != null) {
			return Mono.just(scope);
		}
		ServerWebExchange exchange = ServerWebExchangeContextFilter.getExchange(context).orElse(null);
		if (exchange == null) {
			return Mono.error(new IllegalStateException("No WebFlux exchange in the Reactor context: a @RateLimited "
					+ "method returning Mono, Flux or Publisher must be subscribed to within a request that went "
					+ "through the RateLimitWebFilter (ratelimit.filter.enabled=true) or Spring's "
					+ "ServerWebExchangeContextFilter"));
		}
		ExchangeScope existing = exchange.getAttribute(KEY);
		if (existing != null) {
			return Mono.just(existing);
		}
		return ExchangeRequestContext.resolve(exchange)
			.map((request) -> new ExchangeScope(exchange, request, false).attach(false));
	}

	ServerWebExchange exchange() {
		return this.exchange;
	}

	RequestContext request() {
		return this.request;
	}

	/**
	 * Whether the filter releases the permits recorded here when the exchange completes.
	 * @return true for the filter's scope
	 */
	boolean isFilterOwned() {
		return this.filterOwned;
	}

	/**
	 * The decisions made so far for the exchange, admitted or not.
	 * @return a snapshot
	 */
	List<RateLimitDecision> decisions() {
		return List.copyOf(this.decisions);
	}

	/**
	 * The admitted decisions made so far for the exchange: what its response reports, and what a denial gives back.
	 * @return a snapshot
	 */
	List<RateLimitDecision> admitted() {
		return this.decisions.stream().filter(RateLimitDecision::allowed).toList();
	}

	/**
	 * Checks targets for this exchange and records the decision. The check itself is not cancelled with its
	 * subscriber: if the exchange is cancelled while it is in flight, its permit is released once it arrives, so a
	 * client that goes away never leaves a concurrency permit behind.
	 * @param enforcer the enforcer
	 * @param targets the policies
	 * @param method the rate-limited method, or null in the filter
	 * @param args its arguments, or null
	 * @return the decision
	 */
	Mono<RateLimitDecision> check(RateLimitEnforcer enforcer, List<RateLimitEnforcer.Target> targets,
			@Nullable Method method, @Nullable Object @Nullable [] args) {
		return uncancellable(enforcer.checkAsync(this.request, targets, method, args))
			.flatMap((decision) -> record(decision).thenReturn(decision));
	}

	private static Mono<RateLimitDecision> uncancellable(Mono<RateLimitDecision> check) {
		return Mono.create((sink) -> {
			AtomicBoolean settled = new AtomicBoolean();
			sink.onCancel(() -> settled.set(true));
			check.subscribe((decision) -> {
				if (settled.compareAndSet(false, true)) {
					sink.success(decision);
				}
				else {
					release(decision.permit()).subscribe();
				}
			}, (error) -> {
				if (settled.compareAndSet(false, true)) {
					sink.error(error);
				}
				else if (logger.isDebugEnabled()) {
					logger.debug("Rate-limit check of a cancelled exchange failed", error);
				}
			});
		});
	}

	/**
	 * Records a decision of this exchange; if the exchange is already closed, releases its permit instead.
	 * @param decision the decision
	 * @return completes once recorded (or released)
	 */
	Mono<Void> record(RateLimitDecision decision) {
		if (!this.permits.isClosed()) {
			this.decisions.add(decision);
		}
		return this.permits.hold(decision.permit());
	}

	/**
	 * The permits the exchange holds, released when the scope closes.
	 * @return the live list
	 */
	List<Permit> permits() {
		return this.permits.live();
	}

	/**
	 * Closes the scope: releases every permit recorded. Never fails; a failed release is logged (the backend
	 * reclaims the permit after its window).
	 * @return completes once released
	 */
	Mono<Void> close() {
		return this.permits.close();
	}

	static Mono<Void> release(Permit permit) {
		return HeldPermits.release(permit);
	}

	/**
	 * Gives back everything the admitted decisions recorded so far took, for when a later check of the same
	 * exchange denies it. Never fails.
	 * @return completes once given back
	 */
	Mono<Void> reverseAdmitted() {
		return Flux.fromIterable(admitted())
			.flatMap((decision) -> decision.reversal().releaseAsync().onErrorResume((ex) -> {
				logger.warn("Could not give back the quota of a request denied by a later policy", ex);
				return Mono.empty();
			}))
			.then();
	}

	/**
	 * Sets rate-limit headers on the response, replacing earlier values, unless it is already committed.
	 * @param headers the headers
	 */
	void setHeaders(HttpHeaders headers) {
		ServerHttpResponse response = this.exchange.getResponse();
		if (headers.isEmpty() || response.isCommitted()) {
			return;
		}
		try {
			response.getHeaders().putAll(headers);
		}
		catch (UnsupportedOperationException ex) {
			// committed meanwhile: the headers are read-only now
		}
	}

	/**
	 * Writes a rejection as the response.
	 * @param exchange the exchange
	 * @param rejection the rejection
	 * @return completes once written
	 */
	static Mono<Void> write(ServerWebExchange exchange, Rejection rejection) {
		ServerHttpResponse response = exchange.getResponse();
		if (!response.setStatusCode(HttpStatusCode.valueOf(rejection.status()))) {
			return Mono.error(new IllegalStateException("The response is already committed"));
		}
		HttpHeaders headers = response.getHeaders();
		headers.clearContentHeaders();
		headers.putAll(rejection.headers());
		if (rejection.body().length == 0) {
			return response.setComplete();
		}
		return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(rejection.body())));
	}

}
