package io.github.ratelimit.benchmarks.bucket4j;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The benchmarks' endpoints ({@code /bench}, and {@code /bench/denied} for the half-denied load) on WebFlux, limited
 * by the bucket4j Spring Boot starter's WebFlux filter on its Lettuce backend (which serves its WebFlux and Gateway
 * filters only); the limits come as {@code bucket4j.*} arguments from the http-compare section. The Lettuce backend
 * takes a {@link RedisClient} bean.
 */
@SpringBootApplication
@RestController
public class Bucket4jApplication {

	public static void main(String[] args) {
		SpringApplication.run(Bucket4jApplication.class, args);
	}

	@Bean(destroyMethod = "shutdown")
	RedisClient redisClient(@Value("${bench.redis.host}") String host, @Value("${bench.redis.port}") int port) {
		return RedisClient.create(RedisURI.create(host, port));
	}

	@GetMapping({ "/bench", "/bench/denied" })
	String bench() {
		return "ok";
	}

}
