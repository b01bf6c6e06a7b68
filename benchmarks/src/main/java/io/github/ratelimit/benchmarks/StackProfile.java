package io.github.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * CPU samples in the collapsed-stacks format (one line per distinct stack: frames from the thread's root to the
 * leaf separated by {@code ;}, then the number of samples), with every frame put in a group (Lettuce/Netty, Reactor,
 * Spring Data Redis, this engine, the JDK, the JVM's own threads and runtime, the kernel...).
 * <p>
 * A stack without any Java frame is one of the JVM's own threads, and all its frames belong to the JIT compiler, the
 * garbage collector or the other JVM threads; on a Java thread, the JVM's C++ frames are its runtime (allocation
 * slow paths, stubs, safepoints).
 * <p>
 * Three views per group: <em>self</em>, the samples whose leaf frame is in the group; <em>total</em>, the samples
 * with at least one frame of the group on the stack; <em>by layer</em>, every sample charged to the nearest caller
 * that is a library or our code (neither the JDK, the JVM nor the kernel), so the JDK, native and kernel work a
 * layer causes (a socket write, an allocation) is that layer's cost. Two exceptions: a sample in a thread hand-off
 * (parking a thread to wait for an answer, or waking it up: {@code Unsafe.park} / {@code unpark} on the stack) is
 * charged to the hand-off, whoever waits; and samples with no library or application frame are the JDK's (a
 * stack of only JDK frames) or the JVM threads' own.
 */
final class StackProfile {

	static final String LETTUCE = "Lettuce/Netty";

	static final String REACTOR = "Reactor";

	static final String SPRING_DATA_REDIS = "Spring Data Redis";

	static final String SPRING = "Spring (other)";

	static final String ENGINE = "our engine";

	static final String DRIVER = "benchmark driver";

	static final String OTHER_JAVA = "other Java";

	static final String JDK = "JDK";

	static final String JVM = "JVM runtime";

	static final String JIT = "JIT compiler";

	static final String GC = "garbage collector";

	static final String JVM_THREADS = "JVM (other threads)";

	static final String HAND_OFF = "thread hand-off (park / unpark)";

	static final String NATIVE = "native (libc)";

	static final String KERNEL = "kernel";

	/** Every group, libraries first. */
	static final List<String> GROUPS = List.of(LETTUCE, REACTOR, SPRING_DATA_REDIS, SPRING, ENGINE, DRIVER, OTHER_JAVA,
			HAND_OFF, JDK, JVM, NATIVE, KERNEL, JIT, GC, JVM_THREADS);

	private static final Set<String> LAYERS = Set.of(LETTUCE, REACTOR, SPRING_DATA_REDIS, SPRING, ENGINE, DRIVER,
			OTHER_JAVA);

	/** Class-name prefixes (as async-profiler writes them, with slashes) and their group; the first match wins. */
	private static final List<Map.Entry<String, String>> PREFIXES = List.of(
			Map.entry("io/github/ratelimit/benchmarks/", DRIVER), Map.entry("org/HdrHistogram/", DRIVER),
			Map.entry("io/github/ratelimit/", ENGINE), Map.entry("io/lettuce/", LETTUCE),
			Map.entry("io/netty/", LETTUCE), Map.entry("reactor/", REACTOR),
			Map.entry("org/springframework/data/redis/", SPRING_DATA_REDIS), Map.entry("org/springframework/", SPRING),
			Map.entry("java/", JDK), Map.entry("javax/", JDK), Map.entry("jdk/", JDK), Map.entry("sun/", JDK),
			Map.entry("com/sun/", JDK));

	private final Map<List<String>, Long> stacks;

	private final long samples;

	private StackProfile(Map<List<String>, Long> stacks) {
		this.stacks = stacks;
		this.samples = stacks.values().stream().mapToLong(Long::longValue).sum();
	}

	/**
	 * Reads collapsed stacks.
	 * @param collapsed lines of {@code frame;frame;...;leaf count}
	 * @return the profile
	 */
	static StackProfile parse(String collapsed) {
		Map<List<String>, Long> stacks = new LinkedHashMap<>();
		for (String line : collapsed.split("\n")) {
			int space = line.lastIndexOf(' ');
			if (space <= 0) {
				continue;
			}
			List<String> frames = List.of(line.substring(0, space).split(";"));
			stacks.merge(frames, Long.parseLong(line.substring(space + 1).trim()), Long::sum);
		}
		return new StackProfile(stacks);
	}

	long samples() {
		return this.samples;
	}

	/**
	 * The group of one frame.
	 * @param frame a frame as async-profiler names it: {@code pkg/Class.method} for Java, {@code name_[k]} for the
	 * kernel, {@code Class::method} for the JVM's C++, a plain symbol for other native code
	 * @return its group
	 */
	static String group(String frame) {
		if (frame.endsWith("_[k]")) {
			return KERNEL;
		}
		if (frame.contains("::") || frame.endsWith(" stub") || frame.endsWith("adapters")
				|| frame.equals("Interpreter")) {
			return JVM;
		}
		if (!frame.contains("/") || frame.startsWith("[") || frame.startsWith("/")) {
			return NATIVE;
		}
		for (Map.Entry<String, String> prefix : PREFIXES) {
			if (frame.startsWith(prefix.getKey())) {
				return prefix.getValue();
			}
		}
		return OTHER_JAVA;
	}

	/**
	 * The JVM thread a stack without Java frames belongs to.
	 * @param frames the stack
	 * @return the JIT compiler, the garbage collector or the other JVM threads, or {@code null} for a Java thread
	 */
	private static String jvmThread(List<String> frames) {
		boolean compiler = false;
		boolean gc = false;
		for (String frame : frames) {
			if (isJava(frame)) {
				return null;
			}
			compiler |= frame.startsWith("CompileBroker::");
			gc |= frame.startsWith("G1") || frame.startsWith("GangWorker::") || frame.contains("GC")
					|| frame.startsWith("WorkerThread::");
		}
		return compiler ? JIT : gc ? GC : JVM_THREADS;
	}

	private static boolean isJava(String frame) {
		return switch (group(frame)) {
			case KERNEL, JVM, NATIVE -> false;
			default -> true;
		};
	}

	/** The group of each frame of a stack (all the thread's group for the JVM's own threads). */
	private static List<String> groups(List<String> frames) {
		String thread = jvmThread(frames);
		return frames.stream().map((frame) -> (thread != null) ? thread : group(frame)).toList();
	}

	/** Samples per group whose leaf frame is in it. */
	Map<String, Long> self() {
		Map<String, Long> self = emptyGroups();
		this.stacks.forEach((frames, count) -> {
			List<String> groups = groups(frames);
			self.merge(groups.get(groups.size() - 1), count, Long::sum);
		});
		return self;
	}

	/** Samples per group with at least one of its frames on the stack. */
	Map<String, Long> total() {
		Map<String, Long> total = emptyGroups();
		this.stacks.forEach((frames, count) -> {
			for (String group : new HashSet<>(groups(frames))) {
				total.merge(group, count, Long::sum);
			}
		});
		return total;
	}

	/** Samples per group, each charged to its nearest library or application caller (see the class comment). */
	Map<String, Long> byLayer() {
		Map<String, Long> layers = emptyGroups();
		this.stacks.forEach((frames, count) -> layers.merge(layer(frames), count, Long::sum));
		return layers;
	}

	private static String layer(List<String> frames) {
		String thread = jvmThread(frames);
		if (thread != null) {
			return thread;
		}
		for (String frame : frames) {
			if (frame.startsWith("jdk/internal/misc/Unsafe.park") || frame.startsWith("jdk/internal/misc/Unsafe.unpark")) {
				return HAND_OFF;
			}
		}
		for (int i = frames.size() - 1; i >= 0; i--) {
			String group = group(frames.get(i));
			if (LAYERS.contains(group)) {
				return group;
			}
		}
		return JDK;
	}

	/** One frame's samples: as the leaf, and anywhere on the stack (counted once per stack). */
	record Frame(String name, String group, long self, long total) {
	}

	/**
	 * The frames with the most samples.
	 * @param limit how many
	 * @param bySelf by self samples, else by total samples
	 * @param which the frames to rank
	 * @return the frames, most samples first
	 */
	List<Frame> top(int limit, boolean bySelf, Predicate<Frame> which) {
		Map<String, long[]> frames = new LinkedHashMap<>();
		this.stacks.forEach((stack, count) -> {
			frames.computeIfAbsent(stack.get(stack.size() - 1), (name) -> new long[2])[0] += count;
			Set<String> seen = new HashSet<>();
			for (String frame : stack) {
				if (seen.add(frame)) {
					frames.computeIfAbsent(frame, (name) -> new long[2])[1] += count;
				}
			}
		});
		Map<String, String> groupOf = new HashMap<>();
		this.stacks.keySet().forEach((stack) -> {
			List<String> stackGroups = groups(stack);
			for (int i = 0; i < stack.size(); i++) {
				groupOf.putIfAbsent(stack.get(i), stackGroups.get(i));
			}
		});
		List<Frame> all = new ArrayList<>();
		frames.forEach((name, counts) -> {
			Frame frame = new Frame(name, groupOf.get(name), counts[0], counts[1]);
			if (which.test(frame)) {
				all.add(frame);
			}
		});
		all.sort(Comparator.comparingLong(bySelf ? Frame::self : Frame::total).reversed());
		return all.subList(0, Math.min(limit, all.size()));
	}

	private static Map<String, Long> emptyGroups() {
		Map<String, Long> groups = new LinkedHashMap<>();
		GROUPS.forEach((group) -> groups.put(group, 0L));
		return groups;
	}

}
