package io.github.ratelimit.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * A loopback TCP proxy in front of one target address, for network faults between a client and a
 * real Redis: point the client at {@link #uri()} instead of the server, then switch faults on and
 * off at any time, also while connections are open.
 *
 * <pre>{@code
 * try (RedisServer redis = RedisServer.start(); TcpProxy proxy = TcpProxy.start(redis.address())) {
 *     // client uses proxy.uri()
 *     proxy.latency(Duration.ofMillis(500)); // every chunk is delayed by 500 ms in each direction
 *     proxy.blackhole();                     // nothing is forwarded: the server seems to hang
 *     proxy.resetAll();                      // every open connection is reset (RST)
 *     proxy.refuse();                        // reset everything, and connects are refused
 *     proxy.restore();                       // forward and accept again
 * }
 * }</pre>
 *
 * <p>Each connection is served by daemon threads with plain blocking sockets: a reader and a writer
 * per direction, so that a delayed direction never holds back the other and the order of the bytes
 * in each direction is preserved. A proxy is cheap (one accepting thread); start one per test.
 * The proxy does not look into the bytes, so it is not suitable for Redis Cluster nodes, which
 * announce their own addresses to clients.
 */
public final class TcpProxy implements AutoCloseable {

	private static final int BUFFER_SIZE = 16 * 1024;

	/** Chunks held per direction (while delayed or blackholed) before the reader stops reading. */
	private static final int QUEUED_CHUNKS = 256;

	private static final int CONNECT_TIMEOUT_MILLIS = 2000;

	private static final int BIND_ATTEMPTS = 5;

	private static final int BACKLOG = 128;

	private static final Duration REBIND_TIMEOUT = Duration.ofSeconds(5);

	private static final Duration STOP_ACCEPTING_TIMEOUT = Duration.ofSeconds(5);

	private static final long ACCEPT_ERROR_PAUSE_MILLIS = 10;

	private final HostAndPort target;

	private final int port;

	/**
	 * Guards the switches below, and is the monitor writers wait on while delayed or blackholed
	 * ({@link Object#wait} releases it, so no direction blocks another).
	 */
	private final Object lock = new Object();

	/** {@code null} while refusing (and after close). */
	private @Nullable ServerSocket listener;

	/** The thread accepting on {@link #listener}. */
	private @Nullable Thread acceptor;

	private long latencyNanos;

	private boolean blackholed;

	private boolean closed;

	private final Set<Connection> connections = ConcurrentHashMap.newKeySet();

	private final AtomicLong accepted = new AtomicLong();

	private final AtomicInteger connectionIds = new AtomicInteger();

	private TcpProxy(HostAndPort target, ServerSocket listener) {
		this.target = target;
		this.port = listener.getLocalPort();
		synchronized (this.lock) {
			this.listener = listener;
			this.acceptor = startAccepting(listener);
		}
	}

	/**
	 * Starts a proxy on a free loopback port that forwards every connection to the target.
	 * @param target where to forward to, for example {@code redis.address()}
	 * @return the running proxy, forwarding without delay
	 * @throws UncheckedIOException if no port could be bound
	 */
	public static TcpProxy start(HostAndPort target) {
		IOException last = null;
		for (int attempt = 0; attempt < BIND_ATTEMPTS; attempt++) {
			try {
				return new TcpProxy(target, bind(Ports.freePort()));
			}
			catch (IOException ex) {
				last = ex; // the free port was taken in the meantime: try another one
			}
		}
		throw new UncheckedIOException("Could not bind a proxy port on " + Ports.LOOPBACK_HOST, last);
	}

	private static ServerSocket bind(int port) throws IOException {
		ServerSocket socket = new ServerSocket();
		try {
			socket.setReuseAddress(true); // rebinding after refuse() must not wait for TIME_WAIT
			socket.bind(new InetSocketAddress(InetAddress.getByName(Ports.LOOPBACK_HOST), port), BACKLOG);
			return socket;
		}
		catch (IOException ex) {
			socket.close();
			throw ex;
		}
	}

	/**
	 * Returns the address the proxy forwards to.
	 * @return the target
	 */
	public HostAndPort target() {
		return this.target;
	}

	/**
	 * Returns the port the proxy listens on; it stays the same across {@link #refuse()} and
	 * {@link #restore()}.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * Returns the address clients connect to.
	 * @return {@code 127.0.0.1:<port>}
	 */
	public HostAndPort address() {
		return new HostAndPort(Ports.LOOPBACK_HOST, this.port);
	}

	/**
	 * Returns the URI clients connect to.
	 * @return {@code redis://127.0.0.1:<port>}
	 */
	public String uri() {
		return address().uri();
	}

	/**
	 * Delays every chunk of bytes forwarded, in both directions, by the given time after the proxy
	 * read it; a round trip thus takes twice as long. Applies to data already waiting, too.
	 * @param latency the delay per direction; {@link Duration#ZERO} forwards at once again
	 * @throws IllegalArgumentException if the latency is negative
	 */
	public void latency(Duration latency) {
		if (latency.isNegative()) {
			throw new IllegalArgumentException("Latency must not be negative: " + latency);
		}
		synchronized (this.lock) {
			this.latencyNanos = latency.toNanos();
			this.lock.notifyAll();
		}
	}

	/**
	 * Stops forwarding in both directions, like a host that hangs or a network that drops every
	 * packet: connections stay open and new ones are accepted, but a client gets no answer. What
	 * the proxy reads meanwhile is held back (up to a bound, then TCP flow control stops the
	 * sender) and delivered in order after {@link #restore()}, as TCP would once a partition heals,
	 * so clients never see a stream with a gap. Use {@link #resetAll()} to drop it instead.
	 */
	public void blackhole() {
		synchronized (this.lock) {
			this.blackholed = true;
		}
	}

	/**
	 * Resets every open connection: each socket is closed with {@code SO_LINGER 0}, so both the
	 * client and the target get a TCP RST. New connections are still accepted.
	 */
	public void resetAll() {
		List<Connection> current;
		synchronized (this.lock) {
			current = new ArrayList<>(this.connections);
		}
		current.forEach(Connection::abort);
	}

	/**
	 * Closes the listening socket, so connects are refused, and resets every open connection, like
	 * a host whose service is down. {@link #restore()} listens again on the same port.
	 */
	public void refuse() {
		synchronized (this.lock) {
			requireOpen();
		}
		stopListening();
		resetAll();
	}

	/**
	 * Closes the listening socket and waits for the accepting thread to end: a thread blocked in
	 * {@code accept()} keeps the kernel socket listening (and completing connects) until it returns.
	 */
	private void stopListening() {
		ServerSocket toClose;
		Thread accepting;
		synchronized (this.lock) {
			toClose = this.listener;
			accepting = this.acceptor;
			this.listener = null;
			this.acceptor = null;
		}
		closeQuietly(toClose);
		if (accepting != null && accepting != Thread.currentThread()) {
			try {
				accepting.join(STOP_ACCEPTING_TIMEOUT.toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Ends {@link #blackhole()} and {@link #refuse()}: forwards again (held back data first) and
	 * listens again on the same port. The latency is kept; set it with {@link #latency(Duration)}.
	 * @throws UncheckedIOException if the port cannot be bound again within a few seconds
	 * @throws IllegalStateException if the proxy is closed
	 */
	public void restore() {
		boolean relisten;
		synchronized (this.lock) {
			requireOpen();
			this.blackholed = false;
			this.lock.notifyAll();
			relisten = this.listener == null;
		}
		if (relisten) {
			ServerSocket rebound = rebind();
			synchronized (this.lock) {
				if (this.closed || this.listener != null) {
					closeQuietly(rebound);
					return;
				}
				this.listener = rebound;
				this.acceptor = startAccepting(rebound);
			}
		}
	}

	private ServerSocket rebind() {
		long deadline = System.nanoTime() + REBIND_TIMEOUT.toNanos();
		while (true) {
			try {
				return bind(this.port);
			}
			catch (IOException ex) {
				if (System.nanoTime() - deadline >= 0) {
					throw new UncheckedIOException("Could not listen on port " + this.port + " again", ex);
				}
				Await.pause(ACCEPT_ERROR_PAUSE_MILLIS);
			}
		}
	}

	/**
	 * Returns how many connections the proxy has accepted since it started.
	 * @return the number of accepted connections, including ones closed since
	 */
	public long connectionsAccepted() {
		return this.accepted.get();
	}

	/**
	 * Returns how many connections are currently open (accepted and not yet closed on both sides).
	 * @return the number of open connections
	 */
	public int openConnections() {
		return this.connections.size();
	}

	/** Stops listening and resets every connection. Idempotent. */
	@Override
	public void close() {
		synchronized (this.lock) {
			if (this.closed) {
				return;
			}
			this.closed = true;
			this.lock.notifyAll();
		}
		stopListening();
		resetAll();
	}

	private void requireOpen() {
		if (this.closed) {
			throw new IllegalStateException(this + " is closed");
		}
	}

	private Thread startAccepting(ServerSocket server) {
		Thread thread = daemon("tcp-proxy-" + this.port + "-accept", () -> acceptLoop(server));
		thread.start();
		return thread;
	}

	private void acceptLoop(ServerSocket server) {
		while (!server.isClosed()) {
			Socket client;
			try {
				client = server.accept();
			}
			catch (IOException ex) {
				if (!server.isClosed()) {
					Await.pause(ACCEPT_ERROR_PAUSE_MILLIS); // e.g. out of file descriptors
				}
				continue;
			}
			this.accepted.incrementAndGet();
			Connection connection = new Connection(client, this.connectionIds.incrementAndGet());
			boolean refused;
			synchronized (this.lock) {
				// refuse() or close() may have run between accept() and here
				refused = this.closed || this.listener != server;
				if (!refused) {
					this.connections.add(connection);
				}
			}
			if (refused) {
				connection.abort();
			}
			else {
				connection.start();
			}
		}
	}

	/** Blocks until a chunk read at {@code readNanos} may be forwarded; never holds the lock while waiting. */
	private void awaitRelease(long readNanos) throws InterruptedException {
		synchronized (this.lock) {
			while (!this.closed) {
				if (this.blackholed) {
					this.lock.wait();
					continue;
				}
				long remaining = readNanos + this.latencyNanos - System.nanoTime();
				if (remaining <= 0) {
					return;
				}
				TimeUnit.NANOSECONDS.timedWait(this.lock, remaining);
			}
		}
	}

	private static Thread daemon(String name, Runnable task) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		return thread;
	}

	private static void closeQuietly(@Nullable AutoCloseable closeable) {
		if (closeable != null) {
			try {
				closeable.close();
			}
			catch (Exception ex) {
				// Nothing left to do about it.
			}
		}
	}

	private static void reset(Socket socket) {
		try {
			if (!socket.isClosed()) {
				socket.setSoLinger(true, 0);
			}
		}
		catch (IOException ex) {
			// Closing anyway.
		}
		closeQuietly(socket);
	}

	@Override
	public String toString() {
		return "TcpProxy[" + address() + " -> " + this.target + "]";
	}

	/**
	 * A chunk of bytes read from one side, or the end of the stream when empty.
	 *
	 * @param data the bytes, empty for end of stream
	 * @param readNanos when the proxy read them, per {@link System#nanoTime()}
	 */
	private record Chunk(byte[] data, long readNanos) {

		boolean isEndOfStream() {
			return this.data.length == 0;
		}

	}

	/** One proxied connection: the accepted client socket and the socket to the target. */
	private final class Connection {

		private final Socket client;

		private final Socket upstream = new Socket();

		private final String name;

		private final AtomicBoolean finished = new AtomicBoolean();

		private final AtomicInteger directionsDone = new AtomicInteger();

		private final List<Thread> threads = new ArrayList<>();

		Connection(Socket client, int id) {
			this.client = client;
			this.name = "tcp-proxy-" + TcpProxy.this.port + "-" + id;
		}

		void start() {
			daemon(this.name + "-connect", this::connectAndForward).start();
		}

		private void connectAndForward() {
			try {
				this.client.setTcpNoDelay(true);
				this.upstream.setTcpNoDelay(true);
				this.upstream.connect(new InetSocketAddress(TcpProxy.this.target.host(), TcpProxy.this.target.port()),
						CONNECT_TIMEOUT_MILLIS);
			}
			catch (IOException ex) {
				abort(); // the target refuses: so does the proxy, with a reset
				return;
			}
			Direction up = new Direction(this.client, this.upstream);
			Direction down = new Direction(this.upstream, this.client);
			synchronized (this) {
				if (this.finished.get()) {
					return; // reset while connecting; abort() closed the sockets
				}
				this.threads.add(daemon(this.name + "-up-write", up::write));
				this.threads.add(daemon(this.name + "-down-read", down::read));
				this.threads.add(daemon(this.name + "-down-write", down::write));
				this.threads.forEach(Thread::start);
				this.threads.add(Thread.currentThread());
			}
			up.read();
		}

		/** Both directions delivered their end of stream: close normally. */
		void directionDone() {
			if (this.directionsDone.incrementAndGet() == 2 && this.finished.compareAndSet(false, true)) {
				closeQuietly(this.client);
				closeQuietly(this.upstream);
				TcpProxy.this.connections.remove(this);
			}
		}

		/** Resets both sockets and stops the threads. Idempotent. */
		void abort() {
			if (!this.finished.compareAndSet(false, true)) {
				return;
			}
			reset(this.client);
			reset(this.upstream);
			TcpProxy.this.connections.remove(this);
			synchronized (this) {
				for (Thread thread : this.threads) {
					if (thread != Thread.currentThread()) {
						thread.interrupt();
					}
				}
			}
		}

		/** One direction: a reader that queues what it reads, and a writer that forwards it when due. */
		private final class Direction {

			private final Socket from;

			private final Socket to;

			private final BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(QUEUED_CHUNKS);

			Direction(Socket from, Socket to) {
				this.from = from;
				this.to = to;
			}

			void read() {
				byte[] buffer = new byte[BUFFER_SIZE];
				try {
					InputStream in = this.from.getInputStream();
					while (true) {
						int count = in.read(buffer);
						if (count < 0) {
							this.queue.put(new Chunk(new byte[0], System.nanoTime()));
							return;
						}
						this.queue.put(new Chunk(Arrays.copyOf(buffer, count), System.nanoTime()));
					}
				}
				catch (IOException | InterruptedException ex) {
					abort();
				}
			}

			void write() {
				try {
					OutputStream out = this.to.getOutputStream();
					while (true) {
						Chunk chunk = this.queue.take();
						awaitRelease(chunk.readNanos());
						if (chunk.isEndOfStream()) {
							this.to.shutdownOutput();
							directionDone();
							return;
						}
						out.write(chunk.data());
						out.flush();
					}
				}
				catch (IOException | InterruptedException ex) {
					abort();
				}
			}

		}

	}

}
