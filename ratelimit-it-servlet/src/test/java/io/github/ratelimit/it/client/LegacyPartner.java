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
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A second partner, a JDK HTTP server with a fixed window of its own: it sends only X-RateLimit-Limit, -Remaining,
 * -Reset (epoch seconds) and, on a 429, Retry-After as an HTTP-date (with its Date).
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
			exchange.getResponseHeaders().set("Retry-After", httpDate(resetAt + 999));
			this.refused.incrementAndGet();
		}
		else {
			this.served.incrementAndGet();
		}
		byte[] body = (admitted ? "ok" : "slow down").getBytes(StandardCharsets.UTF_8);
		exchange.sendResponseHeaders(admitted ? 200 : 429, body.length);
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
