package io.github.ratelimit.it.client;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A second partner, a JDK HTTP server with a fixed window of its own: it sends only X-RateLimit-Limit, -Remaining,
 * -Reset (epoch seconds) and, on a 429, Retry-After as an HTTP-date (with its Date). It remembers the date it gave
 * each path and counts a retry on that path arriving before it (on its own clock).
 */
final class LegacyPartner implements AutoCloseable {

	private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'",
			Locale.US);

	private final HttpServer server;

	private final int limit;

	private final long windowMillis;

	private long windowStart;

	private int used;

	final AtomicInteger served = new AtomicInteger();

	final AtomicInteger refused = new AtomicInteger();

	/** Requests that came before the Retry-After date given to their path. */
	final AtomicInteger earlyRetries = new AtomicInteger();

	private final Map<String, Long> retryAfterByPath = new ConcurrentHashMap<>();

	private final AtomicLong refuseNextFor = new AtomicLong();

	/** The next request is refused with only a Retry-After date this far on (no X-RateLimit-*). */
	void refuseNext(long millis) {
		this.refuseNextFor.set(millis);
	}

	LegacyPartner(int limit, long windowMillis) throws IOException {
		this.limit = limit;
		this.windowMillis = windowMillis;
		this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		this.server.createContext("/", this::handle);
		this.server.start();
	}

	String baseUrl() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	private void handle(HttpExchange exchange) throws IOException {
		long now = System.currentTimeMillis();
		String path = exchange.getRequestURI().getPath();
		Long retryAfter = this.retryAfterByPath.remove(path);
		if (retryAfter != null && now < retryAfter) {
			this.earlyRetries.incrementAndGet();
		}
		long refuseFor = this.refuseNextFor.getAndSet(0);
		if (refuseFor > 0) {
			exchange.getResponseHeaders().set("Date", httpDate(now));
			refuse(exchange, path, now + refuseFor);
			return;
		}
		boolean admitted;
		long resetAt;
		int remaining;
		synchronized (this) {
			if (now - this.windowStart >= this.windowMillis) {
				this.windowStart = now;
				this.used = 0;
			}
			admitted = this.used < this.limit;
			if (admitted) {
				this.used++;
			}
			resetAt = this.windowStart + this.windowMillis;
			remaining = this.limit - this.used;
		}
		exchange.getResponseHeaders().set("Date", httpDate(now));
		exchange.getResponseHeaders().set("X-RateLimit-Limit", Integer.toString(this.limit));
		exchange.getResponseHeaders().set("X-RateLimit-Remaining", Integer.toString(remaining));
		exchange.getResponseHeaders().set("X-RateLimit-Reset", Long.toString((resetAt + 999) / 1000));
		if (!admitted) {
			refuse(exchange, path, resetAt + 1000); // later than the reset: the date, not X-RateLimit-Reset, counts
			return;
		}
		this.served.incrementAndGet();
		send(exchange, 200, "ok");
	}

	/** A 429 with Retry-After as the HTTP-date of the second after {@code at}, remembered for the path. */
	private void refuse(HttpExchange exchange, String path, long at) throws IOException {
		long date = (at / 1000 + 1) * 1000;
		this.retryAfterByPath.put(path, date);
		exchange.getResponseHeaders().set("Retry-After", httpDate(date));
		this.refused.incrementAndGet();
		send(exchange, 429, "slow down");
	}

	private static void send(HttpExchange exchange, int status, String text) throws IOException {
		byte[] body = text.getBytes(StandardCharsets.UTF_8);
		exchange.sendResponseHeaders(status, body.length);
		try (OutputStream out = exchange.getResponseBody()) {
			out.write(body);
		}
	}

	/** An IMF-fixdate, the HTTP-date form servers send. */
	private static String httpDate(long millis) {
		return HTTP_DATE.format(Instant.ofEpochMilli(millis).atOffset(ZoneOffset.UTC));
	}

	@Override
	public void close() {
		this.server.stop(0);
	}

}
