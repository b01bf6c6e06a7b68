package io.github.ratelimit.spring;

import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.Principal;
import java.util.HexFormat;
import java.util.Locale;
import java.util.function.Function;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;

/**
 * A parsed key: {@code ip} (grouped by {@link IpPrefixes}), {@code header:<Name>}, {@code principal},
 * {@code global}, {@code @beanName} (a {@link KeyResolver} bean) or a read-only SpEL expression (variables
 * {@code #request}, {@code #principal}, and for {@link RateLimited} methods each parameter by name and {@code #args}).
 * {@link #identity(String)} qualifies a resolved value by the key's {@link #source() source}
 * ({@code header.x-api-key:k-1}), so keys never share counters and no client value equals {@link MissingKey#ANONYMOUS}.
 */
public final class KeySpec {

	/** The identity of the {@code global} key: one counter for all requests. */
	public static final String GLOBAL = "global";

	/** SpEL references that read client-controlled request data; refused in tier expressions. */
	private static final Pattern CLIENT_DATA = Pattern.compile("#request\\b");

	private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

	private static final Pattern TRAILING_ZERO_GROUPS = Pattern.compile("((^|:)0)+$");

	/** Every source {@link #parse} gives a key; none holds a {@code ':'}, so an identity's first one ends it. */
	private static final Pattern SOURCE = Pattern.compile(
			"ip|principal|global|header\\.[!#$%&'*+.^_`|~0-9a-z-]+|bean\\.[^\\s:]+|el\\.[0-9a-f]{8}");

	private static final SpelExpressionParser PARSER = new SpelExpressionParser();

	private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

	private final String spec;

	private final String source;

	private final Resolution resolution;

	private KeySpec(String spec, String source, Resolution resolution) {
		this.spec = spec;
		this.source = source;
		this.resolution = resolution;
	}

	private interface Resolution {

		@Nullable Object resolve(RequestContext request, @Nullable Method method, @Nullable Object @Nullable [] args);

	}

	/** How {@code ip} groups client addresses: by their first {@code ipv4} (1-32) or {@code ipv6} (1-128) bits. */
	public record IpPrefixes(int ipv4, int ipv6) {

		/** IPv4 by address, IPv6 by {@code /64}. */
		public static final IpPrefixes DEFAULT = new IpPrefixes(32, 64);

		public IpPrefixes {
			if (ipv4 < 1 || ipv4 > 32) {
				throw new IllegalArgumentException("IPv4 prefix length must be between 1 and 32 but was " + ipv4);
			}
			if (ipv6 < 1 || ipv6 > 128) {
				throw new IllegalArgumentException("IPv6 prefix length must be between 1 and 128 but was " + ipv6);
			}
		}

		/**
		 * The group of a client address: itself for a full-length prefix, else the masked network and its length
		 * ({@code 2001:db8:1:2::/64}); a value that is no IP literal as it is (no name is ever looked up).
		 */
		public String group(String address) {
			if (this.ipv4 == 32 && isCanonicalIpv4(address)) {
				return address; // what parsing and formatting it gives back: skipped on every request
			}
			String literal = address;
			if (literal.startsWith("[") && literal.endsWith("]")) {
				literal = literal.substring(1, literal.length() - 1);
			}
			int zone = literal.indexOf('%');
			if (zone >= 0) {
				literal = literal.substring(0, zone);
			}
			if (literal.indexOf(':') < 0 && !IPV4.matcher(literal).matches()) {
				return address;
			}
			byte[] bytes;
			try {
				// a literal: parsed, never resolved; an IPv4-mapped IPv6 literal comes back as IPv4
				bytes = InetAddress.getByName(literal).getAddress();
			}
			catch (UnknownHostException | SecurityException ex) {
				return address;
			}
			int prefix = (bytes.length == 4) ? this.ipv4 : this.ipv6;
			if (prefix == bytes.length * 8) {
				return format(bytes);
			}
			for (int bit = prefix; bit < bytes.length * 8; bit++) {
				bytes[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
			}
			return format(bytes) + "/" + prefix;
		}

		/** Whether a text is an IPv4 address as Java writes one: four numbers 0-255, no leading zeros. */
		static boolean isCanonicalIpv4(String text) {
			int parts = 0;
			int at = 0;
			while (at <= text.length()) {
				int end = text.indexOf('.', at);
				end = (end < 0) ? text.length() : end;
				int digits = end - at;
				if (digits < 1 || digits > 3 || (digits > 1 && text.charAt(at) == '0')) {
					return false;
				}
				int value = 0;
				for (int i = at; i < end; i++) {
					char c = text.charAt(i);
					if (c < '0' || c > '9') {
						return false;
					}
					value = value * 10 + (c - '0');
				}
				if (value > 255 || ++parts > 4) {
					return false;
				}
				at = end + 1;
			}
			return parts == 4;
		}

		private static String format(byte[] bytes) {
			try {
				String text = InetAddress.getByAddress(bytes).getHostAddress();
				// a masked IPv6 network ends in zero groups: written as "::"
				return (bytes.length == 16) ? TRAILING_ZERO_GROUPS.matcher(text).replaceFirst("::") : text;
			}
			catch (UnknownHostException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

	/** Looks up {@link KeyResolver} beans, and says how {@code ip} groups (a plain function: the default). */
	public interface Resolvers extends Function<String, KeyResolver> {

		/** How the {@code ip} key groups client addresses. */
		default IpPrefixes ipPrefixes() {
			return IpPrefixes.DEFAULT;
		}

	}

	/** Parses a key ({@code beans} find {@code @name} resolvers); an IllegalArgumentException says what is wrong. */
	public static KeySpec parse(String spec, Function<String, KeyResolver> beans) {
		return parse(spec, beans, false);
	}

	/**
	 * Parses the key of a policy's tiers, which must come from data the client cannot set: {@code header:}, {@code ip}
	 * and SpEL reading {@code #request} are refused; SpEL sees {@code #principal} and server-side request attributes
	 * ({@code attribute('name')}). A {@code @bean} resolver sees the request and must only read trusted data.
	 * @throws IllegalArgumentException with the reason when the specification is invalid or reads client data
	 */
	public static KeySpec parseTier(String spec, Function<String, KeyResolver> beans) {
		return parse(spec, beans, true);
	}

	private static KeySpec parse(String spec, Function<String, KeyResolver> beans, boolean trusted) {
		String trimmed = spec.trim();
		if (trimmed.isEmpty()) {
			throw new IllegalArgumentException("key must not be empty");
		}
		String untrusted = "a tier must come from the principal or the server (#principal, its authorities, "
				+ "attribute('name') of a server-side request attribute, or a @KeyResolver bean), never from a value "
				+ "the client sets";
		boolean header = trimmed.regionMatches(true, 0, "header:", 0, 7);
		if (trusted && (header || trimmed.equals("ip"))) {
			throw new IllegalArgumentException("'" + trimmed + "' is not a tier: " + untrusted);
		}
		switch (trimmed) {
			case "ip":
				IpPrefixes prefixes = (beans instanceof Resolvers resolvers) ? resolvers.ipPrefixes()
						: IpPrefixes.DEFAULT;
				return new KeySpec(trimmed, "ip", (request, method, args) -> (request.remoteAddress() != null)
						? prefixes.group(request.remoteAddress()) : null);
			case "principal":
				return new KeySpec(trimmed, "principal", (request, method, args) -> (request.principal() != null)
						? request.principal().getName() : null);
			case GLOBAL:
				return new KeySpec(trimmed, GLOBAL, (request, method, args) -> GLOBAL);
			default:
				break;
		}
		if (header) {
			String name = trimmed.substring(7).trim();
			if (name.isEmpty() || !name.chars().allMatch(KeySpec::isTokenChar)) {
				throw new IllegalArgumentException("'" + trimmed + "' does not name a valid header");
			}
			return new KeySpec(trimmed, "header." + name.toLowerCase(Locale.ROOT),
					(request, method, args) -> request.header(name));
		}
		if (trimmed.startsWith("@") && trimmed.length() > 1 && trimmed.indexOf(' ') < 0) {
			KeyResolver resolver = beans.apply(trimmed.substring(1));
			return new KeySpec(trimmed, "bean." + trimmed.substring(1),
					(request, method, args) -> resolver.resolve(request));
		}
		if (trusted && CLIENT_DATA.matcher(trimmed).find()) {
			throw new IllegalArgumentException("'" + trimmed + "' reads the request: " + untrusted);
		}
		Expression expression;
		try {
			expression = PARSER.parseExpression(trimmed);
		}
		catch (ParseException ex) {
			throw new IllegalArgumentException("'" + trimmed + "' is not ip, header:<Name>, principal, global, "
					+ "@<KeyResolver bean> nor a valid SpEL expression: " + ex.getMessage(), ex);
		}
		return new KeySpec(trimmed, "el." + shortHash(trimmed),
				(request, method, args) -> evaluate(expression, trusted, request, method, args));
	}

	private static String shortHash(String value) {
		try {
			byte[] hash = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
			return HexFormat.of().formatHex(hash, 0, 4);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by every Java platform", ex);
		}
	}

	/**
	 * Where this key's values come from: {@code ip}, {@code principal}, {@code global}, {@code header.<name>}
	 * (lower case), {@code bean.<name>} or {@code el.<hash of the expression>}.
	 */
	public String source() {
		return this.source;
	}

	/** The identity counted for a value this key resolved: the value qualified by the key's source. */
	public String identity(String value) {
		return identity(this.source, value);
	}

	/** The identity {@link #identity(String)} makes for a key of that {@link #source()}: for tools. */
	public static String identity(String source, String value) {
		return GLOBAL.equals(source) ? GLOBAL : source + ':' + value;
	}

	/** Whether a text has the form of a {@link #source()}. */
	public static boolean isSource(String source) {
		return SOURCE.matcher(source).matches();
	}

	private static boolean isTokenChar(int c) {
		return c > 32 && c < 127 && "()<>@,;:\\\"/[]?={}".indexOf(c) < 0;
	}

	/** Resolves the identity of a request; null when the request has none. */
	public @Nullable String resolve(RequestContext request) {
		return resolve(request, null, null);
	}

	/**
	 * Resolves the identity of a request or (method and arguments not null) a call of a {@link RateLimited} method;
	 * null when there is none, also when an expression yields null or empty.
	 * @throws IllegalStateException naming the expression when it fails
	 */
	public @Nullable String resolve(RequestContext request, @Nullable Method method, @Nullable Object @Nullable [] args) {
		Object value;
		try {
			value = this.resolution.resolve(request, method, args);
		}
		catch (EvaluationException ex) {
			throw new IllegalStateException("Rate-limit key expression '" + this.spec + "' failed: " + ex.getMessage(),
					ex);
		}
		String text = (value != null) ? value.toString() : null;
		return (text == null || text.isEmpty()) ? null : text;
	}

	/** Evaluates a SpEL key, read-only, with the request's principal and the call's arguments as variables. */
	private static @Nullable Object evaluate(Expression expression, boolean trusted, RequestContext request,
			@Nullable Method method, @Nullable Object @Nullable [] args) {
		SimpleEvaluationContext context = SimpleEvaluationContext.forReadOnlyDataBinding()
			.withInstanceMethods()
			.withRootObject(trusted ? new TrustedRequest(request) : request)
			.build();
		if (!trusted) {
			context.setVariable("request", request);
		}
		context.setVariable("principal", request.principal());
		if (method != null && args != null) {
			context.setVariable("args", args);
			@Nullable String @Nullable [] names = PARAMETER_NAMES.getParameterNames(method);
			for (int i = 0; i < args.length; i++) {
				context.setVariable("p" + i, args[i]);
				if (names != null && i < names.length && names[i] != null) {
					context.setVariable(names[i], args[i]);
				}
			}
		}
		return expression.getValue(context);
	}

	/** What a tier expression sees of a request: server-side data only. */
	private static final class TrustedRequest {

		private final RequestContext request;

		TrustedRequest(RequestContext request) {
			this.request = request;
		}

		public @Nullable Principal getPrincipal() {
			return this.request.principal();
		}

		public @Nullable Object attribute(String name) {
			return this.request.attribute(name);
		}

	}

	@Override
	public String toString() {
		return this.spec;
	}

}
