package io.github.ratelimit.sample;

import java.time.Duration;
import java.util.Map;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.spring.RateLimited;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A slow endpoint limited by concurrency: at most two reports are built at a time across all instances (key
 * {@code global}); a third request while two run gets a 429. A permit is given back when the response completes,
 * and reclaimed after the window (the lease) if an instance dies holding it.
 */
@RestController
public class ReportController {

	private final Duration buildTime;

	public ReportController(@Value("${sample.report.build-time:5s}") Duration buildTime) {
		this.buildTime = buildTime;
	}

	@GetMapping("/reports/monthly")
	@RateLimited(name = "reports", algorithm = Algorithm.CONCURRENCY, limit = 2, window = "1m", key = "global")
	public Map<String, String> monthly() throws InterruptedException {
		Thread.sleep(this.buildTime.toMillis());
		return Map.of("report", "monthly", "builtIn", this.buildTime.toString());
	}

}
