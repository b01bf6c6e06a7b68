package io.github.ratelimit.it.client;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The partner: an application limited by this starter (its filter rules, on the policies the test passes), sending
 * RateLimit, RateLimit-Policy, X-RateLimit-* and Retry-After; it counts the requests that reach it, by method, path
 * and status.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(PartnerApplication.Endpoints.class)
public class PartnerApplication {

	/** Requests received, by "METHOD path status". */
	final Map<String, AtomicInteger> received = new ConcurrentHashMap<>();

	int received(String request) {
		AtomicInteger count = this.received.get(request);
		return (count != null) ? count.get() : 0;
	}

	/** Counts every request ahead of the rate-limit filter, by its final status. */
	@Bean
	RequestCounter requestCounter() {
		return new RequestCounter();
	}

	/** The counting filter, first of all. */
	final class RequestCounter extends OncePerRequestFilter implements Ordered {

		@Override
		protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
				throws ServletException, IOException {
			chain.doFilter(request, response);
			String key = request.getMethod() + " " + request.getRequestURI().replaceAll("/[0-9]+$", "") + " "
					+ response.getStatus();
			PartnerApplication.this.received.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
		}

		@Override
		public int getOrder() {
			return Ordered.HIGHEST_PRECEDENCE;
		}

	}

	/** The partner's API. */
	@RestController
	static class Endpoints {

		@GetMapping("/partner/items/{id}")
		String item(@PathVariable int id) {
			return "item " + id;
		}

		@PostMapping("/partner/orders")
		String order() {
			return "ordered";
		}

		@GetMapping("/partner/orders")
		String orders() {
			return "orders";
		}

	}

}
