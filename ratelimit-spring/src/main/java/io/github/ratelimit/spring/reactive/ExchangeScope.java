package io.github.ratelimit.spring.reactive;

import java.lang.reflect.Method;
import java.util.List;
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
 * What the rate limiter knows of one exchange, under one exchange attribute and in the chain's Reactor context: its
 * context, the decisions made for it and the permits it holds (the mirror of the servlet side's request scope).
 * Closing it releases them; a permit recorded after that (a check in flight when the client left) is released at once.
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

	/** Opens the scope of an exchange the {@link RateLimitWebFilter} handles; the filter closes it. */
	static ExchangeScope open(ServerWebExchange exchange, RequestContext request) {
		ExchangeScope scope = new ExchangeScope(exchange, request, true);
		exchange.getAttributes().put(KEY, scope);
		return scope;
	}

	/** Whether a subscription runs within an exchange: {@link #current} finds it. */
	static boolean isPresent(ContextView context) {
		return context.hasKey(KEY) || ServerWebExchangeContextFilter.getExchange(context).isPresent();
	}

	/**
	 * The scope of the exchange a subscription runs for: the filter's, else one made from the exchange Spring's
	 * {@link ServerWebExchangeContextFilter} put into the context (no filter closes it: the caller releases).
	 */
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
		return ExchangeRequestContext.resolve(exchange).map((request) -> {
			ExchangeScope opened = new ExchangeScope(exchange, request, false);
			// another subscription may have got there first: the exchange keeps one scope
			return (exchange.getAttributes().putIfAbsent(KEY, opened) instanceof ExchangeScope first) ? first : opened;
		});
	}

	ServerWebExchange exchange() {
		return this.exchange;
	}

	RequestContext request() {
		return this.request;
	}

	/** Whether the filter releases the permits recorded here when the exchange completes. */
	boolean isFilterOwned() {
		return this.filterOwned;
	}

	/** A snapshot of the decisions made so far, admitted or not. */
	List<RateLimitDecision> decisions() {
		return List.copyOf(this.decisions);
	}

	/** A snapshot of the admitted decisions: what the response reports, and what a denial gives back. */
	List<RateLimitDecision> admitted() {
		return this.decisions.stream().filter(RateLimitDecision::allowed).toList();
	}

	/**
	 * Checks targets for this exchange (method and arguments null in the filter) and records the decision. The check is
	 * not cancelled with its subscriber: a cancelled exchange's permit is released when it arrives.
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
					HeldPermits.release(decision.permit()).subscribe();
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

	/** Records a decision of this exchange; once closed, releases its permit instead. */
	Mono<Void> record(RateLimitDecision decision) {
		if (!this.permits.isClosed()) {
			this.decisions.add(decision);
		}
		return this.permits.hold(decision.permit());
	}

	/** The live list of the permits the exchange holds. */
	List<Permit> permits() {
		return this.permits.live();
	}

	/** Releases every permit recorded; never fails (a failed release is logged). */
	Mono<Void> close() {
		return this.permits.close();
	}

	/** Gives back what the admitted decisions took, when a later check denies the exchange; never fails. */
	Mono<Void> reverseAdmitted() {
		return Flux.fromIterable(admitted())
			.flatMap((decision) -> decision.reversal().releaseAsync().onErrorResume((ex) -> {
				logger.warn("Could not give back the quota of a request denied by a later policy", ex);
				return Mono.empty();
			}))
			.then();
	}

	/** Sets rate-limit headers on the response, replacing earlier values, unless it is already committed. */
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
