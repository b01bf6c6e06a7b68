package io.github.ratelimit.core;

/** A policy value is invalid: the message names the policy and the {@link #field()}, for the property's name. */
public class InvalidPolicyException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final String policy;

	private final String field;

	public InvalidPolicyException(String policy, String field, String problem) {
		super("Rate-limit policy '" + policy + "': " + field + " " + problem);
		this.policy = policy;
		this.field = field;
	}

	/** {@return the name of the invalid policy} */
	public String policy() {
		return this.policy;
	}

	/** {@return the invalid field, as named in configuration ({@code limit}, {@code min-interval}, ...)} */
	public String field() {
		return this.field;
	}

}
