package io.github.ratelimit.spring;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

import io.github.ratelimit.core.RateLimitDecision;
import org.jspecify.annotations.Nullable;

/** Thrown (or signalled) when a {@link RateLimited} method is denied; the exception handlers answer it. */
public class RateLimitExceededException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final transient RateLimitDecision decision;

	/** A denial of the denying decision, with every policy evaluated for the request. */
	public RateLimitExceededException(RateLimitDecision decision) {
		super("Rate limit exceeded: " + decision.decisions()
			.stream()
			.filter((d) -> !d.allowed())
			.map((d) -> d.policy().name())
			.toList(), null, false, false);
		this.decision = decision;
	}

	/** The denying decision, with every policy evaluated for the request. */
	public RateLimitDecision decision() {
		return this.decision;
	}

	/** The denial an error is or was caused by (a proxy may have wrapped it), or null; a cause cycle ends the walk. */
	public static @Nullable RateLimitExceededException findIn(Throwable error) {
		Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
		for (Throwable current = error; current != null && seen.add(current); current = current.getCause()) {
			if (current instanceof RateLimitExceededException denial) {
				return denial;
			}
		}
		return null;
	}

}
