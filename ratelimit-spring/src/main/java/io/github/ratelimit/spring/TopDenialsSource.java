package io.github.ratelimit.spring;

import java.util.Set;

/** Where a policy's most refused identities are read: this instance's own, or every instance's through Redis. */
public interface TopDenialsSource {

	/** {@return the summary of a policy's denials over the window} */
	TopDenials.Summary summary(String policy);

	/** {@return the policies with denials counted here} */
	Set<String> policies();

}
