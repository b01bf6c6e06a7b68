package io.github.ratelimit.spring.client;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.core.Waits;

import org.springframework.http.client.ClientHttpRequestInterceptor;

/**
 * The configured rate-limited partners ({@code ratelimit.client.partners.<name>}), applied by the application to the
 * clients that call them: {@code restClientBuilder.requestInterceptor(clients.restClient("payments"))}, or for a
 * {@code WebClient} {@code webClientBuilder.filter(PartnerExchangeFilter.of(clients.partner("payments")))}. Nothing is applied
 * to a client the application does not name.
 */
public final class RateLimitedClients {

	private final Map<String, RateLimitedPartner> partners;

	private final boolean passThrough;

	/** @param partners the partners by name */
	public RateLimitedClients(Map<String, RateLimitedPartner> partners) {
		this(partners, false);
	}

	private RateLimitedClients(Map<String, RateLimitedPartner> partners, boolean passThrough) {
		this.partners = Map.copyOf(partners);
		this.passThrough = passThrough;
	}

	/**
	 * @return partners of any name whose calls pass unchanged ({@code ratelimit.enabled=false}: the application
	 * starts and calls as it would without the starter)
	 */
	public static RateLimitedClients passThrough() {
		return new RateLimitedClients(Map.of(), true);
	}

	/**
	 * @param name a configured partner's name
	 * @return the partner
	 * @throws IllegalArgumentException when no partner of that name is configured (unless passing through)
	 */
	public RateLimitedPartner partner(String name) {
		if (this.passThrough) {
			return RateLimitedPartner.passThrough(name);
		}
		RateLimitedPartner partner = this.partners.get(name);
		if (partner == null) {
			throw new IllegalArgumentException("No rate-limited partner '" + name
					+ "': configure ratelimit.client.partners." + name + ".* (configured: "
					+ this.partners.keySet() + ")");
		}
		return partner;
	}

	/**
	 * @param name a configured partner's name
	 * @return the interceptor to add to the {@code RestClient} or {@code RestTemplate} that calls it
	 */
	public ClientHttpRequestInterceptor restClient(String name) {
		return partner(name).interceptor();
	}

	/** @return every partner's last known quotas and Retry-After wait, by partner name (for the Actuator endpoint) */
	public Map<String, Object> known() {
		Map<String, Object> known = new LinkedHashMap<>();
		this.partners.keySet().stream().sorted().forEach((name) -> known.put(name, Waits.await(partner(name).known())));
		return known;
	}

}
