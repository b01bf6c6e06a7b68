package io.github.ratelimit.it.servlet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;

import io.github.ratelimit.spring.RateLimited;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * Every kind of completion under the concurrency policy {@code single} (one request in flight per client): a
 * {@code @RateLimited} class, so every handler method takes a permit, the inherited ones too. Each handler passes
 * the {@link Gate}, which holds it in flight when the test arms it.
 */
@RestController
@RequestMapping("/inflight")
@RateLimited("single")
public class InFlightController extends GatedHandlers {

	public InFlightController(Gate gate, ExecutorService completions) {
		super(gate, completions);
	}

	@GetMapping("/entity")
	public ResponseEntity<String> entity() {
		this.gate.pass();
		return ResponseEntity.ok().header("X-Kind", "entity").body("entity");
	}

	@GetMapping("/fail")
	public String fail() {
		this.gate.pass();
		throw new IllegalStateException("handler failed");
	}

	@GetMapping("/callable")
	public Callable<String> callable() {
		return () -> {
			this.gate.pass();
			return "callable";
		};
	}

	@GetMapping("/deferred-timeout")
	public DeferredResult<String> deferredTimeout() {
		this.gate.signal();
		return new DeferredResult<>(2000L);
	}

	@GetMapping("/sse")
	public SseEmitter sse() {
		SseEmitter emitter = new SseEmitter(30_000L);
		this.completions.execute(() -> {
			try {
				emitter.send(SseEmitter.event().name("tick").data("one"));
				this.gate.pass();
				emitter.send(SseEmitter.event().name("tick").data("two"));
				emitter.complete();
			}
			catch (IOException | RuntimeException ex) {
				emitter.completeWithError(ex);
			}
		});
		return emitter;
	}

	@GetMapping("/streaming")
	public StreamingResponseBody streaming() {
		return (out) -> {
			out.write("chunk one\n".getBytes(StandardCharsets.UTF_8));
			out.flush();
			this.gate.pass();
			out.write("chunk two\n".getBytes(StandardCharsets.UTF_8));
		};
	}

}
