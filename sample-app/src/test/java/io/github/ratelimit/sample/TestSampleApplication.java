package io.github.ratelimit.sample;

import java.io.File;
import java.lang.ProcessBuilder.Redirect;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.test.EmbeddedRedisConfiguration;
import io.github.ratelimit.testkit.RedisServer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The sample on a real Redis with nothing installed, Spring Boot's development-time services way:
 * {@code ./mvnw -q -pl sample-app -am spring-boot:test-run}. Starts a {@code redis-server} of its own on a free
 * port ({@link EmbeddedRedisConfiguration}), the sample on it (port 8080), and a second instance of the sample, a
 * JVM of its own, on the same Redis (port 8081): one limit, shared by two instances. Ctrl-C stops all three.
 * <p>
 * {@code --sample.second-instance.port=N} moves the second instance; {@code -1} starts none.
 */
public final class TestSampleApplication {

	/** The port of the second instance: the first's + 1 by default, -1 for none. */
	static final String SECOND_PORT = "sample.second-instance.port";

	private static final Log logger = LogFactory.getLog(TestSampleApplication.class);

	private TestSampleApplication() {
	}

	public static void main(String[] args) {
		start(Redirect.INHERIT, args);
	}

	/**
	 * Starts Redis and the instances.
	 * @param secondOutput where the second instance writes its log
	 * @param args the first instance's arguments
	 * @return the running instances
	 */
	static Running start(Redirect secondOutput, String... args) {
		ConfigurableApplicationContext first = SpringApplication.from(SampleApplication::main)
			.with(EmbeddedRedisConfiguration.class)
			.run(args)
			.getApplicationContext();
		RedisServer redis = first.getBean(RedisServer.class);
		int port = first.getEnvironment().getProperty(SECOND_PORT, Integer.class, port(first) + 1);
		Process second = null;
		if (port >= 0) {
			logger.info("Starting a second instance on port " + port + ", on the same Redis (" + redis.uri() + ")");
			second = launch(redis, port, secondOutput);
			Process started = second;
			Runtime.getRuntime().addShutdownHook(new Thread(started::destroy));
		}
		return new Running(first, second, port);
	}

	static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	/** A JVM of its own, on this JVM's class path, that exits when this one does (see {@link SampleInstance}). */
	private static Process launch(RedisServer redis, int port, Redirect output) {
		String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
		List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
				"-D" + SampleInstance.PARENT_PID + "=" + ProcessHandle.current().pid(), SampleInstance.class.getName(),
				"--server.port=" + port, "--spring.application.name=sample-2",
				"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port()));
		try {
			return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output).start();
		}
		catch (java.io.IOException ex) {
			throw new IllegalStateException("Could not start the second instance: " + command, ex);
		}
	}

	/**
	 * What {@link #start} started.
	 * @param first the first instance
	 * @param second the second instance's process, or null
	 * @param secondPort the second instance's port
	 */
	record Running(ConfigurableApplicationContext first, Process second, int secondPort) implements AutoCloseable {

		@Override
		public void close() {
			if (this.second != null) {
				this.second.destroy();
			}
			this.first.close();
		}

	}

}
