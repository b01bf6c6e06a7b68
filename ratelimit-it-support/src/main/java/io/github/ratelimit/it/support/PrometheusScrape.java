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
	 * The value of one {@code ratelimit_decisions_total} series.
	 * @param http the application
	 * @param outcome the outcome tag
	 * @param policy the policy tag
	 * @return the count, 0 when the series does not exist (yet)
	 */
	public static double decisions(HttpGet http, String outcome, String policy) {
		String scrape = http.get("/actuator/prometheus", "scraper").body();
		Matcher matcher = Pattern.compile("ratelimit_decisions_total\\{outcome=\"" + Pattern.quote(outcome)
				+ "\",policy=\"" + Pattern.quote(policy) + "\"} (\\S+)")
			.matcher(scrape);
		return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
	}

}
