package io.github.ratelimit.autoconfigure;

import java.util.regex.Pattern;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** Checks {@code ratelimit.client.*} for {@link RateLimitPropertiesCheck}: each refusal names the property. */
final class ClientPropertiesCheck {

	private static final String PARTNERS = "ratelimit.client.partners.";

	/** A partner's name is part of its Redis key and its meters' tag. */
	private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

	private ClientPropertiesCheck() {
	}

	static void check(ClientProperties client) {
		client.partners().forEach((name, partner) -> {
			if (!NAME.matcher(name).matches()) {
				throw new InvalidConfigurationPropertyValueException("ratelimit.client.partners", name,
						"a partner's name is 1 to 64 letters, digits, '.', '_' or '-'");
			}
			String property = PARTNERS + name;
			if (partner.maxWait() == null || partner.maxWait().isNegative()) {
				throw new InvalidConfigurationPropertyValueException(property + ".max-wait", partner.maxWait(),
						"must not be negative (0 means never wait)");
			}
			if (partner.maxRetries() < 0) {
				throw new InvalidConfigurationPropertyValueException(property + ".max-retries", partner.maxRetries(),
						"must be 0 or more");
			}
			double paceBelow = partner.paceBelow();
			if (!(paceBelow >= 0 && paceBelow <= 1)) {
				throw new InvalidConfigurationPropertyValueException(property + ".pace-below", paceBelow,
						"must be at least 0 and at most 1");
			}
			if (partner.maxBelieved() == null || partner.maxBelieved().toSeconds() < 1) {
				throw new InvalidConfigurationPropertyValueException(property + ".max-believed",
						partner.maxBelieved(), "must be at least 1s");
			}
		});
	}

}
