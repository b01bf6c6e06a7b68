package io.github.ratelimit.it.jedis;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.ClassUtils;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** A user's servlet application on Jedis: limited endpoints (application.yml) and what it runs on, unlimited. */
@SpringBootApplication
@RestController
public class JedisApplication {

	private final RedisConnectionFactory connectionFactory;

	JedisApplication(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	public static void main(String[] args) {
		SpringApplication.run(JedisApplication.class, args);
	}

	/** Limited by the filter rules: orders (open) and payments (closed). */
	@GetMapping({ "/api/orders", "/api/payments" })
	String limited() {
		return "served";
	}

	/** The connection factory's class, and whether Lettuce is on the class path at all. */
	@GetMapping("/client")
	String client() {
		boolean lettuce = ClassUtils.isPresent("io.lettuce.core.RedisClient", getClass().getClassLoader());
		return this.connectionFactory.getClass().getSimpleName() + (lettuce ? " with Lettuce" : " without Lettuce");
	}

}
