package io.github.ratelimit.it.support;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads series out of {@code /actuator/prometheus}.
 */
public final class PrometheusScrape {

	private PrometheusScrape() {
	}

	/**
	 * The decisions of a policy with an outcome: the sum of its {@code ratelimit_decisions_total} series (one per tier).
	 * @param http the application
	 * @param outcome the outcome tag
	 * @param policy the policy tag
	 * @return the count, 0 when the series does not exist (yet)
	 */
	public static double decisions(HttpGet http, String outcome, String policy) {
		String scrape = http.get("/actuator/prometheus", "scraper").body();
		Matcher matcher = Pattern.compile("ratelimit_decisions_total\\{outcome=\"" + Pattern.quote(outcome)
				+ "\",policy=\"" + Pattern.quote(policy) + "\",tier=\"[^\"]*\"} (\\S+)")
			.matcher(scrape);
		double sum = 0;
		while (matcher.find()) {
			sum += Double.parseDouble(matcher.group(1));
		}
		return sum;
	}

}
