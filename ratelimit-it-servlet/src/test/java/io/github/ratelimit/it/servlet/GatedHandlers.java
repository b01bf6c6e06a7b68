package io.github.ratelimit.it.servlet;

import java.util.concurrent.ExecutorService;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.context.request.async.DeferredResult;

/**
 * The handlers the in-flight controllers share, synchronous and deferred: each passes the {@link Gate}, which holds
 * it in flight when the test arms it. The subclasses say what limits them (an annotation, or a filter rule).
 */
public abstract class GatedHandlers {

	protected final Gate gate;

	protected final ExecutorService completions;

	protected GatedHandlers(Gate gate, ExecutorService completions) {
		this.gate = gate;
		this.completions = completions;
	}

	@GetMapping("/sync")
	public String sync() {
		this.gate.pass();
		return "sync";
	}

	@GetMapping("/deferred")
	public DeferredResult<String> deferred() {
		DeferredResult<String> result = new DeferredResult<>();
		this.completions.execute(() -> {
			this.gate.pass();
			result.setResult("deferred");
		});
		return result;
	}

}
