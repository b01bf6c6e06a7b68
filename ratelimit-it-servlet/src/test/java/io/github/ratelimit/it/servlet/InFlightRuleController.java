package io.github.ratelimit.it.servlet;

import java.util.concurrent.ExecutorService;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

/**
 * Handlers under the filter rule {@code /inflight-rule/**} (concurrency policy {@code single-rule}), without
 * annotations: the filter's own permit is released when the response completes.
 */
@RestController
@RequestMapping("/inflight-rule")
public class InFlightRuleController {

	private final Gate gate;

	private final ExecutorService completions;

	public InFlightRuleController(Gate gate, ExecutorService completions) {
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
