package io.github.ratelimit.sample;

/**
 * The second instance of {@link TestSampleApplication}: the sample itself, in a JVM that exits when the JVM that
 * started it does (also when that one is killed, so no instance is left behind).
 */
public final class SampleInstance {

	/** The system property with the pid of the JVM that started this one. */
	static final String PARENT_PID = "sample.parent-pid";

	private SampleInstance() {
	}

	public static void main(String[] args) {
		long parent = Long.parseLong(System.getProperty(PARENT_PID, "-1"));
		ProcessHandle.of(parent).ifPresentOrElse((handle) -> handle.onExit().thenRun(() -> System.exit(0)),
				() -> System.exit(0));
		SampleApplication.main(args);
	}

}
