package io.github.ratelimit.spring.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequestInterceptor;

/**
 * One rate-limited partner: what its calls do around the exchange, shared by the {@code RestClient} interceptor
 * ({@link #interceptor()}) and the {@code WebClient} filter ({@link PartnerExchangeFilter#of}, in a class of its
 * own so that this one loads without spring-webflux). A call takes its turn
 * before it is sent (waiting for it within the maximum wait, else failing with a
 * {@link PartnerRateLimitedException}), its response is recorded, and a refusal is retried or failed.
 */
public final class RateLimitedPartner {

	/** Idempotent methods (RFC 9110): sent again after a refusal. */
	private static final Set<HttpMethod> IDEMPOTENT = Set.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS,
			HttpMethod.TRACE, HttpMethod.PUT, HttpMethod.DELETE);

	/**
	 * How calls to a partner behave.
	 *
	 * @param maxWait the longest a call waits in all (its turn, Retry-After) from its first try; 0 never waits
	 * @param maxRetries how many times a refused call is sent again
	 * @param retryNonIdempotent whether a refused POST or PATCH is sent again too
	 * @param paceBelow share of the partner's limit below which the quota left is spread over the time to its reset
	 * (0: only when none is left; 1: always)
	 * @param maxBelieved the longest wait a partner's figure is believed to impose (a longer reset, window or
	 * Retry-After counts as this long), so that one odd response cannot stop calls for a day
	 */
	public record Settings(Duration maxWait, int maxRetries, boolean retryNonIdempotent, double paceBelow,
			Duration maxBelieved) {

		/** The default of {@code max-believed}: 10 minutes. */
		public static final Duration DEFAULT_MAX_BELIEVED = Duration.ofMinutes(10);

		public Settings(Duration maxWait, int maxRetries, boolean retryNonIdempotent, double paceBelow) {
			this(maxWait, maxRetries, retryNonIdempotent, paceBelow, DEFAULT_MAX_BELIEVED);
		}

	}

	/** The shortest wait before a retry (doubled on each further retry), whatever the partner said. */
	static final Duration MIN_RETRY_WAIT = Duration.ofSeconds(1);

	/** What becomes of a response. */
	enum Verdict {

		/** Given to the caller. */
		PASS,
		/** Sent again at its next turn. */
		RETRY,
		/** Failed with a {@link PartnerRateLimitedException}. */
		REFUSE

	}

	private final String name;

	private final Settings settings;

	private final PartnerState state;

	private final PartnerCallListener listener;

	private final boolean passThrough;

	/**
	 * @param name the partner's name (a key of its state)
	 * @param settings how its calls behave
	 * @param state where its limits are kept
	 * @param listener told of waits, retries and refusals
	 */
	public RateLimitedPartner(String name, Settings settings, PartnerState state, PartnerCallListener listener) {
		this(name, settings, state, listener, false);
	}

	private RateLimitedPartner(String name, Settings settings, PartnerState state, PartnerCallListener listener,
			boolean passThrough) {
		this.name = name;
		this.settings = settings;
		this.state = state;
		this.listener = listener;
		this.passThrough = passThrough;
	}

	/**
	 * A partner whose calls pass unchanged: no turn, nothing recorded, every response given to the caller (rate
	 * limiting switched off, {@code ratelimit.enabled=false}).
	 * @param name the partner's name
	 * @return the partner
	 */
	public static RateLimitedPartner passThrough(String name) {
		return new RateLimitedPartner(name, new Settings(Duration.ZERO, 0, false, 0), new LocalPartnerState(),
				PartnerCallListener.NONE, true);
	}

	/** @return the interceptor to add to the {@code RestClient} (or {@code RestTemplate}) that calls this partner */
	public ClientHttpRequestInterceptor interceptor() {
		return new PartnerRateLimitInterceptor(this);
	}

	/** @return the partner's name */
	public String name() {
		return this.name;
	}

	/** @return the partner's quotas as known now, and the wait a Retry-After still imposes */
	public Mono<Map<String, Object>> known() {
		return this.state.describe(this.name);
	}

	/** The end of a call's maximum wait, in {@link System#nanoTime()}. */
	long deadline() {
		return System.nanoTime() + this.settings.maxWait().toNanos();
	}

	/**
	 * Takes the call's turn and waits for it; fails when it comes after the deadline (then no turn is taken). A
	 * retry waits at least {@link #MIN_RETRY_WAIT}, doubled per further retry, and is counted here, once it is sure
	 * to be sent.
	 * @param retries how many times the call was sent and refused
	 * @param last the refusal the call is retried after, or null on its first try
	 */
	Mono<Void> awaitTurn(long deadline, int retries, @Nullable PartnerResponse last) {
		Duration least = (last != null) ? MIN_RETRY_WAIT.multipliedBy(1L << Math.min(retries - 1, 6)) : Duration.ZERO;
		Duration budget = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
		Mono<Duration> turn = (least.compareTo(budget) > 0) ? Mono.just(least)
				: this.state.reserve(this.name, this.settings.paceBelow(), budget).defaultIfEmpty(Duration.ZERO);
		return turn.map((wait) -> (wait.compareTo(least) < 0) ? least : wait)
			.flatMap((wait) -> {
				if (!wait.isZero() && System.nanoTime() + wait.toNanos() - deadline > 0) {
					this.listener.refused(this.name);
					return Mono.error((last != null) ? refusal(last) : new PartnerRateLimitedException(this.name, 0,
							wait, List.of()));
				}
				if (last != null) {
					this.listener.retried(this.name, last.status());
				}
				if (wait.isZero()) {
					return Mono.empty();
				}
				this.listener.waited(this.name, wait);
				return Mono.delay(wait).then();
			});
	}

	/** Reads a response's limits and records them. */
	Mono<PartnerResponse> observe(int status, HttpHeaders headers) {
		PartnerResponse seen = PartnerHeaders.read(headers, status, System.currentTimeMillis(),
				this.settings.maxBelieved().toSeconds());
		if (this.passThrough || (seen.quotas().isEmpty() && seen.retryAfter() == null)) {
			return Mono.just(seen);
		}
		return this.state.learn(this.name, seen).thenReturn(seen);
	}

	/**
	 * What becomes of a response: a 429, or a 503 with Retry-After, is retried when it says when (a Retry-After, or
	 * a quota with none left) and the request may be sent again; any other response passes.
	 */
	Verdict verdict(PartnerResponse seen, HttpMethod method, int retries) {
		return verdict(seen, method, retries, true);
	}

	/**
	 * @param replayable whether the request's body can be sent again (a WebClient body inserter that streams
	 * cannot: such a call is failed rather than retried)
	 */
	Verdict verdict(PartnerResponse seen, HttpMethod method, int retries, boolean replayable) {
		if (this.passThrough || !seen.refused() || (seen.status() == 503 && seen.retryAfter() == null)) {
			return Verdict.PASS;
		}
		boolean saysWhen = seen.retryAfter() != null || seen.quotas().stream().anyMatch((q) -> q.remaining() == 0);
		boolean resendable = replayable && (IDEMPOTENT.contains(method) || this.settings.retryNonIdempotent());
		if (saysWhen && resendable && retries < this.settings.maxRetries()) {
			return Verdict.RETRY; // counted as retried once its turn is taken (within max-wait)
		}
		this.listener.refused(this.name);
		return Verdict.REFUSE;
	}

	/** The failure of a refused call, with the partner's figures. */
	PartnerRateLimitedException refusal(PartnerResponse seen) {
		return new PartnerRateLimitedException(this.name, seen.status(), seen.retryAfter(), seen.quotas());
	}

}
