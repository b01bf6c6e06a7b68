package io.github.ratelimit.benchmarks.http;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The smallest web application: one endpoint, limited (or not) by the starter's filter, on Tomcat or (with
 * {@code spring.main.web-application-type=reactive}) on Netty; {@code /bench/denied} is the same endpoint under
 * another path, for a policy that denies.
 */
@SpringBootApplication
@RestController
public class BenchmarkApplication {

	/** Runs the application alone (to profile it, or load it by hand); the arguments are Spring Boot's. */
	public static void main(String[] args) {
		SpringApplication.run(BenchmarkApplication.class, args);
	}

	@GetMapping({ "/bench", "/bench/denied" })
	String bench() {
		return "ok";
	}

}
