package io.github.ratelimit.benchmarks;

import java.time.Duration;

import io.github.ratelimit.testkit.RedisServer;
import io.github.ratelimit.testkit.TcpProxy;
import org.jspecify.annotations.Nullable;

/**
 * A failure of Redis as section 5 causes it, and how Redis comes back: the process killed and restarted on the same
 * port, the process frozen and resumed, or the network in front of it slowed down by a {@link TcpProxy} and sped up
 * again.
 */
enum Fault {

	/** {@code SIGKILL}: connections are reset and connects refused; then a new, empty process on the same port. */
	KILLED("killed", false) {
		@Override
		void inject(RedisServer redis, @Nullable TcpProxy proxy) {
			redis.kill();
		}

		@Override
		void restore(RedisServer redis, @Nullable TcpProxy proxy) {
			redis.restart();
		}
	},

	/** {@code SIGSTOP}: connections stay open and nothing is answered; {@code SIGCONT} answers what is pending. */
	FROZEN("frozen", false) {
		@Override
		void inject(RedisServer redis, @Nullable TcpProxy proxy) {
			redis.freeze();
		}

		@Override
		void restore(RedisServer redis, @Nullable TcpProxy proxy) {
			redis.thaw();
		}
	},

	/** The proxy delays every chunk by {@link #SLOW_LATENCY} in each direction, then by nothing again. */
	SLOW("slow", true) {
		@Override
		void inject(RedisServer redis, @Nullable TcpProxy proxy) {
			proxy(proxy).latency(SLOW_LATENCY);
		}

		@Override
		void restore(RedisServer redis, @Nullable TcpProxy proxy) {
			proxy(proxy).latency(Duration.ZERO);
		}
	};

	/** The latency the proxy adds per direction while Redis is slow: a round trip takes twice as long. */
	static final Duration SLOW_LATENCY = Duration.ofMillis(200);

	private final String label;

	private final boolean throughProxy;

	Fault(String label, boolean throughProxy) {
		this.label = label;
		this.throughProxy = throughProxy;
	}

	String label() {
		return this.label;
	}

	/** Whether the client must reach Redis through a proxy for this fault. */
	boolean throughProxy() {
		return this.throughProxy;
	}

	abstract void inject(RedisServer redis, @Nullable TcpProxy proxy);

	abstract void restore(RedisServer redis, @Nullable TcpProxy proxy);

	private static TcpProxy proxy(@Nullable TcpProxy proxy) {
		if (proxy == null) {
			throw new IllegalStateException("This fault needs a proxy in front of Redis");
		}
		return proxy;
	}

}
