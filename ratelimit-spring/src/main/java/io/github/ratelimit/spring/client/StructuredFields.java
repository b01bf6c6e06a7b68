package io.github.ratelimit.spring.client;

import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * A parser of RFC 9651 (formerly 8941) Structured Field Values, the subset the rate-limit headers use: lists and
 * dictionaries of items and inner lists, with parameters; integers, decimals, strings, tokens, byte sequences and
 * booleans, dates and display strings. Parsing is strict, as the RFC asks: a field that does not parse is
 * refused whole ({@link IllegalArgumentException}), and the caller ignores it.
 */
final class StructuredFields {

	/**
	 * A bare item with its parameters. The value is a Long, BigDecimal, String, Token, byte[], Boolean, Date or
	 * DisplayString.
	 */
	record Item(Object value, Map<String, Object> parameters) {

		/** A parameter as a long, or null when absent or not an integer. */
		@Nullable Long integer(String name) {
			return (this.parameters.get(name) instanceof Long value) ? value : null;
		}

	}

	/** An inner list: items in parentheses, with parameters of its own. */
	record InnerList(List<Item> items, Map<String, Object> parameters) {
	}

	/** A token (an unquoted name). */
	record Token(String name) {
	}

	/** A Date ({@code @<seconds since the epoch>}). */
	record Date(long epochSeconds) {
	}

	/** A Display String ({@code %"..."}, Unicode text percent-encoded as UTF-8). */
	record DisplayString(String text) {
	}

	private static final long MAX_INTEGER = 999_999_999_999_999L;

	private final String input;

	private int pos;

	private StructuredFields(String input) {
		this.input = stripSpaces(input);
	}

	/** Parses a List field: items and inner lists. */
	static List<Object> list(String field) {
		StructuredFields parser = new StructuredFields(field);
		List<Object> members = new ArrayList<>();
		while (!parser.atEnd()) {
			members.add(parser.member());
			if (parser.endOfMember()) {
				break;
			}
		}
		return members;
	}

	/** Parses a Dictionary field: a key without a value is the boolean true. */
	static Map<String, Object> dictionary(String field) {
		StructuredFields parser = new StructuredFields(field);
		Map<String, Object> members = new LinkedHashMap<>();
		while (!parser.atEnd()) {
			String key = parser.key();
			Object member;
			if (parser.peek() == '=') {
				parser.pos++;
				member = parser.member();
			}
			else {
				member = new Item(Boolean.TRUE, parser.parameters());
			}
			members.remove(key); // the last duplicate wins, in the last position
			members.put(key, member);
			if (parser.endOfMember()) {
				break;
			}
		}
		return members;
	}

	/** After a member: true at the end, else consumes the comma; a trailing comma is an error. */
	private boolean endOfMember() {
		skipOptionalWhitespace();
		if (atEnd()) {
			return true;
		}
		expect(',');
		skipOptionalWhitespace();
		if (atEnd()) {
			throw error("trailing comma");
		}
		return false;
	}

	private Object member() {
		return (peek() == '(') ? innerList() : item();
	}

	private InnerList innerList() {
		expect('(');
		List<Item> items = new ArrayList<>();
		while (true) {
			skipSpaces();
			if (peek() == ')') {
				this.pos++;
				return new InnerList(items, parameters());
			}
			items.add(item());
			char next = peek();
			if (next != ' ' && next != ')') {
				throw error("expected a space or ')'");
			}
		}
	}

	private Item item() {
		Object value = bareItem();
		return new Item(value, parameters());
	}

	private Map<String, Object> parameters() {
		Map<String, Object> parameters = new LinkedHashMap<>();
		while (peek() == ';') {
			this.pos++;
			skipSpaces();
			String key = key();
			Object value = Boolean.TRUE;
			if (peek() == '=') {
				this.pos++;
				value = bareItem();
			}
			parameters.remove(key);
			parameters.put(key, value);
		}
		return parameters;
	}

	private Object bareItem() {
		char c = peek();
		if (c == '-' || isDigit(c)) {
			return number();
		}
		if (c == '"') {
			return string();
		}
		if (c == '*' || isAlpha(c)) {
			return token();
		}
		if (c == ':') {
			return byteSequence();
		}
		if (c == '?') {
			return bool();
		}
		if (c == '@') {
			this.pos++;
			if (!(number() instanceof Long seconds)) {
				throw error("a date is an integer");
			}
			return new Date(seconds);
		}
		if (c == '%') {
			return displayString();
		}
		throw error("unexpected character");
	}

	private Object number() {
		int start = this.pos;
		if (peek() == '-') {
			this.pos++;
		}
		if (!isDigit(peek())) {
			throw error("a digit expected");
		}
		int dot = -1;
		while (isDigit(peek()) || (peek() == '.' && dot < 0)) {
			if (peek() == '.') {
				dot = this.pos;
			}
			this.pos++;
		}
		String text = this.input.substring(start, this.pos);
		String digits = text.startsWith("-") ? text.substring(1) : text;
		if (dot < 0) {
			if (digits.length() > 15) {
				throw error("integer too long");
			}
			long value = Long.parseLong(text);
			if (Math.abs(value) > MAX_INTEGER) {
				throw error("integer out of range");
			}
			return value;
		}
		int integral = dot - start - (text.startsWith("-") ? 1 : 0);
		int fraction = this.pos - dot - 1;
		if (integral > 12 || fraction < 1 || fraction > 3) {
			throw error("invalid decimal");
		}
		return new BigDecimal(text);
	}

	private String string() {
		expect('"');
		StringBuilder value = new StringBuilder();
		while (!atEnd()) {
			char c = this.input.charAt(this.pos++);
			if (c == '\\') {
				char escaped = atEnd() ? 0 : this.input.charAt(this.pos++);
				if (escaped != '"' && escaped != '\\') {
					throw error("invalid escape");
				}
				value.append(escaped);
			}
			else if (c == '"') {
				return value.toString();
			}
			else if (c < 0x20 || c > 0x7e) {
				throw error("invalid character in a string");
			}
			else {
				value.append(c);
			}
		}
		throw error("unterminated string");
	}

	private DisplayString displayString() {
		expect('%');
		expect('"');
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		while (!atEnd()) {
			char c = this.input.charAt(this.pos++);
			if (c == '"') {
				try {
					return new DisplayString(StandardCharsets.UTF_8.newDecoder()
						.decode(ByteBuffer.wrap(bytes.toByteArray()))
						.toString());
				}
				catch (CharacterCodingException ex) {
					throw error("invalid UTF-8 in a display string");
				}
			}
			if (c == '%') {
				String hex = (this.pos + 2 <= this.input.length()) ? this.input.substring(this.pos, this.pos + 2) : "";
				if (!hex.matches("[0-9a-f]{2}")) {
					throw error("invalid percent-encoding");
				}
				bytes.write(Integer.parseInt(hex, 16));
				this.pos += 2;
			}
			else if (c < 0x20 || c > 0x7e) {
				throw error("invalid character in a display string");
			}
			else {
				bytes.write(c);
			}
		}
		throw error("unterminated display string");
	}

	private Token token() {
		int start = this.pos;
		this.pos++;
		while (isTokenChar(peek())) {
			this.pos++;
		}
		return new Token(this.input.substring(start, this.pos));
	}

	private byte[] byteSequence() {
		expect(':');
		int end = this.input.indexOf(':', this.pos);
		if (end < 0) {
			throw error("unterminated byte sequence");
		}
		String encoded = this.input.substring(this.pos, end);
		this.pos = end + 1;
		if (!encoded.matches("[A-Za-z0-9+/]*=*")) {
			throw error("invalid base64");
		}
		try {
			return Base64.getDecoder().decode(encoded);
		}
		catch (IllegalArgumentException ex) {
			throw error("invalid base64");
		}
	}

	private Boolean bool() {
		expect('?');
		char c = peek();
		if (c != '0' && c != '1') {
			throw error("invalid boolean");
		}
		this.pos++;
		return c == '1';
	}

	private String key() {
		char first = peek();
		if (first != '*' && !(first >= 'a' && first <= 'z')) {
			throw error("a key must start with a lowercase letter or '*'");
		}
		int start = this.pos;
		while (true) {
			char c = peek();
			if ((c >= 'a' && c <= 'z') || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*') {
				this.pos++;
			}
			else {
				return this.input.substring(start, this.pos);
			}
		}
	}

	private void expect(char c) {
		if (peek() != c) {
			throw error("'" + c + "' expected");
		}
		this.pos++;
	}

	private char peek() {
		return atEnd() ? 0 : this.input.charAt(this.pos);
	}

	private boolean atEnd() {
		return this.pos >= this.input.length();
	}

	private void skipSpaces() {
		while (peek() == ' ') {
			this.pos++;
		}
	}

	private void skipOptionalWhitespace() {
		while (peek() == ' ' || peek() == '\t') {
			this.pos++;
		}
	}

	private IllegalArgumentException error(String reason) {
		return new IllegalArgumentException("Invalid structured field at " + this.pos + ": " + reason);
	}

	/** The RFC discards leading and trailing spaces (only SP, not tabs) before parsing. */
	private static String stripSpaces(String field) {
		int start = 0;
		int end = field.length();
		while (start < end && field.charAt(start) == ' ') {
			start++;
		}
		while (end > start && field.charAt(end - 1) == ' ') {
			end--;
		}
		return field.substring(start, end);
	}

	private static boolean isDigit(char c) {
		return c >= '0' && c <= '9';
	}

	private static boolean isAlpha(char c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
	}

	private static boolean isTokenChar(char c) {
		return isAlpha(c) || isDigit(c) || ":/!#$%&'*+-.^_`|~".indexOf(c) >= 0 && c != 0;
	}

}
