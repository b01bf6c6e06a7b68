package io.github.ratelimit.sample;

import java.io.File;
import java.lang.ProcessBuilder.Redirect;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.test.EmbeddedRedisConfiguration;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The sample on a real Redis with nothing installed, Spring Boot's development-time services way:
 * {@code ./mvnw -q -pl sample-app -am spring-boot:test-run}. Starts a {@code redis-server} of its own on a free
 * port ({@link EmbeddedRedisConfiguration}), the sample on it (port 8080), and a second instance of the sample, a
 * JVM of its own, on the same Redis (port 8081): one limit, shared by two instances. Ctrl-C stops all three.
 * <p>
 * {@code --sample.second-instance.port=N} moves the second instance; {@code -1} starts none. With Docker,
 * {@code --sample.redis=docker} takes Redis from a container instead ({@link RedisContainerConfiguration}).
 * Arguments go through Maven as {@code -Dspring-boot.run.arguments="--sample.redis=docker"}.
 * <p>
 * The one main class of the test sources, so that {@code spring-boot:test-run} needs no configuration: started with
 * {@value #PARENT_PID} set, it is the second instance, which exits when the JVM that started it does (also when that
 * one is killed, so no instance is left behind).
 */
public final class TestSampleApplication {

	/** The port of the second instance: the first's + 1 by default, -1 for none. */
	static final String SECOND_PORT = "sample.second-instance.port";

	/** The system property with the pid of the JVM that started the second instance. */
	static final String PARENT_PID = "sample.parent-pid";

	private static final Log logger = LogFactory.getLog(TestSampleApplication.class);

	private TestSampleApplication() {
	}

	public static void main(String[] args) {
		String parent = System.getProperty(PARENT_PID);
		if (parent != null) {
			ProcessHandle.of(Long.parseLong(parent))
				.ifPresentOrElse((handle) -> handle.onExit().thenRun(() -> System.exit(0)), () -> System.exit(0));
			SampleApplication.main(args);
		}
		else {
			start(Redirect.INHERIT, args);
		}
	}

	/**
	 * Starts Redis and the instances.
	 * @param secondOutput where the second instance writes its log
	 * @param args the first instance's arguments
	 * @return the running instances
	 */
	static Running start(Redirect secondOutput, String... args) {
		boolean docker = List.of(args).contains("--sample.redis=docker");
		ConfigurableApplicationContext first = SpringApplication.from(SampleApplication::main)
			.with(docker ? RedisContainerConfiguration.class : EmbeddedRedisConfiguration.class)
			.run(args)
			.getApplicationContext();
		DataRedisConnectionDetails.Standalone redis = first.getBean(DataRedisConnectionDetails.class).getStandalone();
		int port = first.getEnvironment().getProperty(SECOND_PORT, Integer.class, port(first) + 1);
		Process second = null;
		if (port >= 0) {
			logger.info("Starting a second instance on port " + port + ", on the same Redis (" + redis.getHost() + ":"
					+ redis.getPort() + ")");
			second = launch(redis, port, secondOutput);
			Process started = second;
			Runtime.getRuntime().addShutdownHook(new Thread(started::destroy));
		}
		return new Running(first, second, port);
	}

	static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	/** A JVM of its own, on this JVM's class path, that exits when this one does. */
	private static Process launch(DataRedisConnectionDetails.Standalone redis, int port, Redirect output) {
		String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
		List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
				"-D" + PARENT_PID + "=" + ProcessHandle.current().pid(), TestSampleApplication.class.getName(),
				"--server.port=" + port, "--spring.application.name=sample-2",
				"--spring.data.redis.host=" + redis.getHost(), "--spring.data.redis.port=" + redis.getPort()));
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
