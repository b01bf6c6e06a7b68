package io.github.ratelimit.benchmarks.http;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The smallest servlet application: one endpoint, limited (or not) by the starter's filter.
 */
@SpringBootApplication
@RestController
public class BenchmarkApplication {

	@GetMapping("/bench")
	String bench() {
		return "ok";
	}

}
