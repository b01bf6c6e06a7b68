package io.github.ratelimit.spring.client;

import java.time.Duration;
import java.util.Map;

import reactor.core.publisher.Mono;

/**
 * Where what is known of partners' limits is kept: in this instance ({@link LocalPartnerState}) or shared by every
 * instance through Redis ({@link SharedPartnerState}). Its calls never block.
 */
public interface PartnerState {

	/**
	 * Takes the next call's turn, unless it comes later than the budget: then nothing is taken.
	 * @param partner the partner's name
	 * @param paceBelow the share of a partner's limit below which calls are spread over the time to its reset
	 * @param budget the longest the call may wait
	 * @return how long the call waits before it goes (zero: at once); beyond the budget, it is not sent
	 */
	Mono<Duration> reserve(String partner, double paceBelow, Duration budget);

	/**
	 * Takes the next call's turn, however late.
	 * @param partner the partner's name
	 * @param paceBelow the share of a partner's limit below which calls are spread over the time to its reset
	 * @return how long the call waits before it goes
	 */
	default Mono<Duration> reserve(String partner, double paceBelow) {
		return reserve(partner, paceBelow, Duration.ofMillis(Long.MAX_VALUE));
	}

	/**
	 * Records what a partner's response said.
	 * @param partner the partner's name
	 * @param response what it said
	 * @return completes when recorded
	 */
	Mono<Void> learn(String partner, PartnerResponse response);

	/**
	 * @param partner the partner's name
	 * @return its quotas known now (figures by {@code policy} or {@code policy|partition}) and the wait a Retry-After
	 * still imposes
	 */
	Mono<Map<String, Object>> describe(String partner);

}
