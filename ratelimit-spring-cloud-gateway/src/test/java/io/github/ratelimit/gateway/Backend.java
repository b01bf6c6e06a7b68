package io.github.ratelimit.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import com.sun.net.httpserver.HttpServer;

/**
 * The service behind the gateway: a real HTTP server on a free loopback port. It answers {@code 200 backend
 * <path>} and counts the requests that reached it; requests under {@code /slots/hold} wait until {@link #release()}.
 */
final class Backend implements AutoCloseable {

	private final HttpServer server;

	private final ExecutorService executor = Executors.newFixedThreadPool(16);

	private final AtomicInteger hits = new AtomicInteger();

	private final AtomicReference<CountDownLatch> hold = new AtomicReference<>(new CountDownLatch(1));

	private Backend(HttpServer server) {
		this.server = server;
	}

	static Backend start() {
		// without it the JDK's server answers small responses after the client's delayed ACK (about 40 ms)
		System.setProperty("sun.net.httpserver.nodelay", "true");
		try {
			HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
			Backend backend = new Backend(server);
			server.setExecutor(backend.executor);
			server.createContext("/", (exchange) -> {
				backend.hits.incrementAndGet();
				String path = exchange.getRequestURI().getPath();
				if (path.contains("/hold")) {
					try {
						backend.hold.get().await(10, TimeUnit.SECONDS);
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				}
				byte[] body = ("backend " + path).getBytes(StandardCharsets.UTF_8);
				exchange.getResponseHeaders().set("Content-Type", "text/plain");
				exchange.sendResponseHeaders(200, body.length);
				exchange.getResponseBody().write(body);
				exchange.close();
			});
			server.start();
			return backend;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	String uri() {
		return "http://127.0.0.1:" + this.server.getAddress().getPort();
	}

	int hits() {
		return this.hits.get();
	}

	/**
	 * Waits until at least so many requests have reached the backend, at most 10 s, and no longer than the awaited
	 * request runs (once it is done, it will not reach the backend any more).
	 * @param atLeast the count of requests
	 * @param request the request awaited
	 */
	void awaitHits(int atLeast, Future<?> request) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (this.hits.get() < atLeast && !request.isDone() && System.nanoTime() < deadline) {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
		}
	}

	/** Lets the held requests answer; later ones are held again until the next release. */
	void release() {
		this.hold.getAndSet(new CountDownLatch(1)).countDown();
	}

	@Override
	public void close() {
		release();
		this.server.stop(0);
		this.executor.shutdownNow();
	}

}
