package io.github.ratelimit.testkit;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

import org.jspecify.annotations.Nullable;

/**
 * Load on an application over real HTTP on the loopback interface, for tests that break Redis while requests are
 * running: a fixed number of client threads, each sending its next request when the previous one is answered, until
 * {@link #stop()} or a bounded number of requests. Every response is recorded (status, headers, body, when it was
 * sent) so that a test can assert on outcomes per phase; a request that is not answered within its timeout is
 * recorded as an error, never waited for longer.
 *
 * <pre>{@code
 * try (HttpLoad load = HttpLoad.start(8, Duration.ofSeconds(5), (i) -> URI.create(base + "/api/" + (i % 10)))) {
 *     redis.kill();
 *     ...
 *     List<HttpLoad.Response> responses = load.stop();
 * }
 * }</pre>
 */
public final class HttpLoad implements AutoCloseable {

	/** Most requests one load sends, whatever happens: the loop always ends by itself. */
	public static final long MAX_REQUESTS = 200_000;

	private final HttpClient client;

	private final List<Thread> threads = new ArrayList<>();

	private final List<Response> responses = Collections.synchronizedList(new ArrayList<>());

	private final AtomicBoolean running = new AtomicBoolean(true);

	private final AtomicLong sequence = new AtomicLong();

	private final Duration requestTimeout;

	private final LongFunction<HttpRequest> requests;

	private HttpLoad(int clients, Duration requestTimeout, LongFunction<HttpRequest> requests) {
		this.requestTimeout = requestTimeout;
		this.requests = requests;
		this.client = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(requestTimeout)
			.build();
		for (int i = 0; i < clients; i++) {
			Thread thread = new Thread(this::run, "http-load-" + i);
			thread.setDaemon(true);
			this.threads.add(thread);
		}
		this.threads.forEach(Thread::start);
	}

	/**
	 * Starts GET requests to the URIs given by {@code uris} for request numbers 0, 1, 2...
	 * @param clients how many requests are in flight at once
	 * @param requestTimeout how long one request may take before it is recorded as an error
	 * @param uris the URI of the n-th request
	 * @return the running load
	 */
	public static HttpLoad start(int clients, Duration requestTimeout, LongFunction<URI> uris) {
		return startRequests(clients, requestTimeout,
				(n) -> HttpRequest.newBuilder(uris.apply(n)).timeout(requestTimeout).GET().build());
	}

	/**
	 * Starts the requests given by {@code requests} for request numbers 0, 1, 2...
	 * @param clients how many requests are in flight at once
	 * @param requestTimeout how long one request may take before it is recorded as an error (also set it on the
	 * requests)
	 * @param requests the n-th request
	 * @return the running load
	 */
	public static HttpLoad startRequests(int clients, Duration requestTimeout, LongFunction<HttpRequest> requests) {
		return new HttpLoad(clients, requestTimeout, requests);
	}

	private void run() {
		while (this.running.get()) {
			long n = this.sequence.getAndIncrement();
			if (n >= MAX_REQUESTS) {
				return;
			}
			HttpRequest request = this.requests.apply(n);
			long started = System.nanoTime();
			try {
				HttpResponse<String> response = this.client.send(request, HttpResponse.BodyHandlers.ofString());
				this.responses.add(new Response(request.uri(), started, System.nanoTime() - started,
						response.statusCode(), response.headers().map(), response.body(), null));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (Exception ex) {
				this.responses.add(new Response(request.uri(), started, System.nanoTime() - started, -1, Map.of(),
						"", ex));
			}
		}
	}

	/**
	 * The responses recorded so far (a snapshot).
	 * @return the responses, in the order they were answered
	 */
	public List<Response> responses() {
		synchronized (this.responses) {
			return List.copyOf(this.responses);
		}
	}

	/**
	 * Stops sending, waits for the requests in flight (each at most its timeout) and returns every response.
	 * @return the responses, in the order they were answered
	 */
	public List<Response> stop() {
		this.running.set(false);
		long waitMillis = this.requestTimeout.toMillis() + TimeUnit.SECONDS.toMillis(5);
		for (Thread thread : this.threads) {
			try {
				thread.join(waitMillis);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				break;
			}
		}
		return responses();
	}

	/** Same as {@link #stop()}. */
	@Override
	public void close() {
		stop();
	}

	/**
	 * One recorded request.
	 *
	 * @param uri the URI requested
	 * @param startedNanos {@link System#nanoTime()} when it was sent
	 * @param tookNanos how long until it was answered (or failed)
	 * @param status the HTTP status, or -1 when there was no answer (timeout, connection failure)
	 * @param headers the response headers
	 * @param body the response body
	 * @param error why there was no answer, or null
	 */
	public record Response(URI uri, long startedNanos, long tookNanos, int status, Map<String, List<String>> headers,
			String body, @Nullable Throwable error) {

		/**
		 * The first value of a header, case-insensitively.
		 * @param name the header name
		 * @return the value
		 */
		public Optional<String> header(String name) {
			return this.headers.entrySet()
				.stream()
				.filter((entry) -> entry.getKey().equalsIgnoreCase(name) && !entry.getValue().isEmpty())
				.map((entry) -> entry.getValue().get(0))
				.findFirst();
		}

		/**
		 * Whether the request was sent at or after a moment.
		 * @param nanoTime a {@link System#nanoTime()} value
		 * @return true when sent then or later
		 */
		public boolean sentAfter(long nanoTime) {
			return this.startedNanos - nanoTime >= 0;
		}

		/**
		 * The path requested.
		 * @return the path
		 */
		public String path() {
			return this.uri.getPath();
		}

		@Override
		public String toString() {
			return this.uri + " -> " + ((this.error != null) ? this.error.toString() : this.status) + " in "
					+ TimeUnit.NANOSECONDS.toMillis(this.tookNanos) + " ms";
		}

	}

}
