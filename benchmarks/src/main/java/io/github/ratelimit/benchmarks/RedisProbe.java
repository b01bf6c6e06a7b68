package io.github.ratelimit.benchmarks;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * Reads the Redis server's own counters on a connection of its own: CPU seconds ({@code INFO cpu}), the
 * commands clients sent and the server's time in them ({@code INFO commandstats}, per contender the commands it
 * sends itself).
 */
final class RedisProbe implements AutoCloseable {

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private final boolean disabled;

	RedisProbe(String uri) {
		this.client = RedisClient.create(uri);
		this.connection = this.client.connect();
		this.disabled = false;
	}

	private RedisProbe() {
		this.client = null;
		this.connection = null;
		this.disabled = true;
	}

	/** A probe for runs without Redis (the local backend). */
	static RedisProbe none() {
		return new RedisProbe();
	}

	record Snapshot(double cpuSeconds, Map<String, Long> calls) {

		double cpuMicrosSince(Snapshot before) {
			return (this.cpuSeconds - before.cpuSeconds) * 1e6;
		}

		/**
		 * Calls of one command since {@code before}.
		 * @param before the earlier snapshot
		 * @param command the lower-case command name
		 * @return the number of calls
		 */
		long callsSince(Snapshot before, String command) {
			return this.calls.getOrDefault(command, 0L) - before.calls.getOrDefault(command, 0L);
		}

	}

	Snapshot snapshot() {
		if (this.disabled) {
			return new Snapshot(0, Map.of());
		}
		String cpu = this.connection.sync().info("cpu");
		double seconds = value(cpu, "used_cpu_sys") + value(cpu, "used_cpu_user");
		Map<String, Long> calls = new HashMap<>();
		for (String line : this.connection.sync().info("commandstats").split("\r?\n")) {
			if (line.startsWith("cmdstat_")) {
				String name = line.substring(8, line.indexOf(':'));
				int at = line.indexOf("calls=") + 6;
				calls.put(name, Long.parseLong(line.substring(at, line.indexOf(',', at))));
			}
		}
		return new Snapshot(seconds, calls);
	}

	/** Calls and server time of some commands, summed, from {@code INFO commandstats}. */
	record CommandTime(long calls, long micros) {

		CommandTime since(CommandTime before) {
			return new CommandTime(this.calls - before.calls, this.micros - before.micros);
		}

	}

	/**
	 * The calls and the server's own time ({@code usec}) so far of the given commands, summed.
	 * @param commands lower-case command names, e.g. {@code evalsha}
	 * @return the totals since the server started or its statistics were reset
	 */
	CommandTime commandTime(String... commands) {
		long calls = 0;
		long micros = 0;
		List<String> names = List.of(commands);
		for (String line : this.connection.sync().info("commandstats").split("\r?\n")) {
			if (line.startsWith("cmdstat_") && names.contains(line.substring(8, line.indexOf(':')))) {
				calls += field(line, "calls=");
				micros += field(line, "usec=");
			}
		}
		return new CommandTime(calls, micros);
	}

	/**
	 * The server's own time per call of a command while some work runs, from its totals rather than its rounded
	 * {@code usec_per_call}.
	 * @param command the lower-case command name, e.g. {@code evalsha}
	 * @param work what sends the calls
	 * @return microseconds per call
	 * @throws IllegalStateException when the work made no such call
	 */
	double microsPerCall(String command, Runnable work) {
		CommandTime before = commandTime(command);
		work.run();
		CommandTime spent = commandTime(command).since(before);
		if (spent.calls() == 0) {
			throw new IllegalStateException("No " + command + " in INFO commandstats");
		}
		return (double) spent.micros() / spent.calls();
	}

	private static long field(String line, String name) {
		int at = line.indexOf(name, line.indexOf(':')) + name.length();
		int end = line.indexOf(',', at);
		return Long.parseLong(line.substring(at, (end < 0) ? line.length() : end));
	}

	long usedMemory() {
		return (long) value(this.connection.sync().info("memory"), "used_memory");
	}

	StatefulRedisConnection<String, String> connection() {
		return this.connection;
	}

	private static double value(String info, String field) {
		for (String line : info.split("\r?\n")) {
			if (line.startsWith(field + ":")) {
				return Double.parseDouble(line.substring(field.length() + 1).trim());
			}
		}
		throw new IllegalStateException("INFO has no " + field);
	}

	@Override
	public void close() {
		if (!this.disabled) {
			this.connection.close();
			this.client.shutdown();
		}
	}

}
