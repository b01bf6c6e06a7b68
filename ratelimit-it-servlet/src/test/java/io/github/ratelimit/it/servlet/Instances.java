package io.github.ratelimit.it.servlet;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.testkit.RedisServer;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Instances of the {@link TestApplication}, each on its own random port, on one Redis: what the multi-instance
 * tests start and stop.
 */
final class Instances {

	private Instances() {
	}

	/**
	 * Starts an instance.
	 * @param redis the Redis every instance shares
	 * @param properties more properties ({@code name=value}), over those of {@code application.yml}
	 * @return the running instance
	 */
	static ConfigurableApplicationContext start(RedisServer redis, String... properties) {
		return start(TestApplication.class, redis, properties);
	}

	/**
	 * Starts an instance of another application.
	 * @param application the application's configuration class
	 * @param redis the Redis every instance shares
	 * @param properties more properties ({@code name=value}), over those of its configuration files
	 * @return the running instance
	 */
	static ConfigurableApplicationContext start(Class<?> application, RedisServer redis, String... properties) {
		List<String> arguments = new ArrayList<>(List.of("--server.port=0", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port()));
		for (String property : properties) {
			arguments.add("--" + property);
		}
		return new SpringApplicationBuilder(application).run(arguments.toArray(String[]::new));
	}

	/**
	 * Stops the instances that were started.
	 * @param instances the instances, null where one did not start
	 */
	static void stop(ConfigurableApplicationContext... instances) {
		for (ConfigurableApplicationContext instance : instances) {
			if (instance != null) {
				instance.close();
			}
		}
	}

	/**
	 * The port an instance listens on.
	 * @param instance the instance
	 * @return its port
	 */
	static int port(ConfigurableApplicationContext instance) {
		return ((WebServerApplicationContext) instance).getWebServer().getPort();
	}

	/**
	 * A client of an instance.
	 * @param instance the instance
	 * @return the client
	 */
	static Http http(ConfigurableApplicationContext instance) {
		return new Http(port(instance));
	}

}
