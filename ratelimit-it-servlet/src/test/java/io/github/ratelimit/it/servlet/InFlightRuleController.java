package io.github.ratelimit.it.servlet;

import java.util.concurrent.ExecutorService;

import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Handlers under the filter rule {@code /inflight-rule/**} (concurrency policy {@code single-rule}), without
 * annotations: the filter's own permit is released when the response completes.
 */
@RestController
@RequestMapping("/inflight-rule")
public class InFlightRuleController extends GatedHandlers {

	public InFlightRuleController(Gate gate, ExecutorService completions) {
		super(gate, completions);
	}

}
