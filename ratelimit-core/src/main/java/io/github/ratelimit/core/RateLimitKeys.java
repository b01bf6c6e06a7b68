package io.github.ratelimit.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

import org.jspecify.annotations.Nullable;

/**
 * The storage key of a policy and an identity, {@code <prefix>{<identity>}:<policy>:<suffix>} (the identity is the
 * Cluster hash tag; the suffix is {@link Algorithm#keySuffix()}). Identities of at most {@value #MAX_RAW_LENGTH}
 * characters of {@code [A-Za-z0-9._:@/+=-]} stay raw; any other becomes {@code ~} and the base64url SHA-256 of its
 * UTF-8 bytes.
 */
public final class RateLimitKeys {

	/** The longest identity kept as it is. */
	public static final int MAX_RAW_LENGTH = 64;

	/** The default key prefix. */
	public static final String DEFAULT_PREFIX = "rl:";

	private static final int MAX_PREFIX_LENGTH = 64;

	private final String prefix;

	public RateLimitKeys(String prefix) {
		if (prefix.length() > MAX_PREFIX_LENGTH || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0
				|| prefix.chars().anyMatch((c) -> c <= ' ' || c > '~')) {
			throw new IllegalArgumentException("Key prefix must be at most " + MAX_PREFIX_LENGTH
					+ " printable ASCII characters without spaces or braces but was '" + prefix + "'");
		}
		this.prefix = prefix;
	}

	/** {@return the storage key of a policy and a raw identity} */
	public String key(RateLimitPolicy policy, String identity) {
		return this.prefix + '{' + safeIdentity(identity) + "}:" + policy.name() + ':' + policy.algorithm().keySuffix();
	}

	/**
	 * {@return whether a key holds state of this layout for a policy and a raw identity, each null for any} The
	 * policy name is compared whole ({@code per-client} does not match {@code per-client-2}).
	 */
	public boolean matches(String key, @Nullable String policyName, @Nullable String identity) {
		if (!key.startsWith(this.prefix) || key.length() <= this.prefix.length()
				|| key.charAt(this.prefix.length()) != '{') {
			return false;
		}
		int close = key.indexOf('}', this.prefix.length() + 1); // stored identities hold no braces
		int last = key.lastIndexOf(':');
		if (close < 0 || close + 1 >= key.length() || key.charAt(close + 1) != ':' || last <= close + 1) {
			return false;
		}
		if (identity != null && !key.substring(this.prefix.length() + 1, close).equals(safeIdentity(identity))) {
			return false;
		}
		return policyName == null || key.substring(close + 2, last).equals(policyName);
	}

	/**
	 * {@return a glob (for {@code SCAN MATCH}) of the state keys of a policy and a raw identity, each null for any}
	 * It may match a few more than {@link #matches} accepts, so check each.
	 */
	public String pattern(@Nullable String policyName, @Nullable String identity) {
		return glob(this.prefix) + '{' + ((identity != null) ? glob(safeIdentity(identity)) : "*") + "}:"
				+ ((policyName != null) ? glob(policyName) + ":*" : "*");
	}

	private static String glob(String literal) {
		StringBuilder escaped = new StringBuilder(literal.length());
		for (int i = 0; i < literal.length(); i++) {
			char c = literal.charAt(i);
			if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
				escaped.append('\\');
			}
			escaped.append(c);
		}
		return escaped.toString();
	}

	/** {@return the identity as stored: itself when short and plain, else its digest; safe characters only} */
	public static String safeIdentity(String identity) {
		return isPlain(identity) ? identity : digest(identity);
	}

	private static boolean isPlain(String identity) {
		int length = identity.length();
		if (length == 0 || length > MAX_RAW_LENGTH) {
			return false;
		}
		for (int i = 0; i < length; i++) {
			char c = identity.charAt(i);
			boolean plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
					|| c == '_' || c == ':' || c == '@' || c == '/' || c == '+' || c == '=' || c == '-';
			if (!plain) {
				return false;
			}
		}
		return true;
	}

	/** {@return {@code ~} and the base64url SHA-256 of an identity's UTF-8 bytes: the stored form of a hostile one} */
	public static String digest(String identity) {
		try {
			byte[] hash = MessageDigest.getInstance("SHA-256").digest(identity.getBytes(StandardCharsets.UTF_8));
			return '~' + Base64.getUrlEncoder().withoutPadding().encodeToString(hash);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

}
