package io.github.ratelimit.benchmarks;

import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link StackProfile}: frame groups and the self, total and by-layer views of collapsed stacks.
 */
class StackProfileTests {

	/** Stacks shaped like async-profiler's collapsed output of the engine's blocking and non-blocking paths. */
	private static final String COLLAPSED = String.join("\n",
			// a load thread in our engine, encoding arguments through the JDK: the engine's layer
			"java/lang/Thread.run;io/github/ratelimit/benchmarks/LoadDriver.lambda$blocking$0;"
					+ "io/github/ratelimit/core/DefaultRateLimiter.check;java/lang/String.getBytes 4",
			// the same thread waiting for the answer: a hand-off, charged to neither the engine nor the JDK
			"java/lang/Thread.run;io/github/ratelimit/core/redis/RedisRateLimitBackend.await;"
					+ "java/util/concurrent/CompletableFuture.get;jdk/internal/misc/Unsafe.park;Unsafe_Park;"
					+ "__futex_abstimed_wait_common;do_syscall_64_[k];finish_task_switch.isra.0_[k] 3",
			// Netty's event loop writing to the socket: Lettuce/Netty's, the kernel's work included
			"java/lang/Thread.run;io/netty/channel/nio/NioIoHandler.run;io/lettuce/core/protocol/CommandHandler.write;"
					+ "sun/nio/ch/SocketChannelImpl.write;__libc_write;tcp_sendmsg_[k] 5",
			// a Reactor operator calling back into Spring Data Redis
			"java/lang/Thread.run;org/springframework/data/redis/connection/lettuce/LettuceReactiveScriptingCommands"
					+ ".evalSha;reactor/core/publisher/FluxMap$MapSubscriber.onNext;itable stub 2",
			// the JIT compiler's and the garbage collector's threads: no Java frame
			"clone3;start_thread;thread_native_entry;Thread::call_run;JavaThread::thread_main_inner;"
					+ "CompileBroker::compiler_thread_loop;C2Compiler::compile_method;PhaseChaitin::Split 6",
			"clone3;start_thread;thread_native_entry;Thread::call_run;GangWorker::run;SpinPause 1",
			// a JDK-only stack
			"java/lang/Thread.run;java/util/concurrent/ThreadPoolExecutor.runWorker;java/util/HashMap.get 1", "");

	@Test
	void framesAreGroupedByTheirClassOrKind() {
		assertThat(StackProfile.group("io/lettuce/core/protocol/CommandHandler.write")).isEqualTo(StackProfile.LETTUCE);
		assertThat(StackProfile.group("io/netty/channel/nio/NioIoHandler.run")).isEqualTo(StackProfile.LETTUCE);
		assertThat(StackProfile.group("reactor/core/publisher/Mono.subscribe")).isEqualTo(StackProfile.REACTOR);
		assertThat(StackProfile.group("org/springframework/data/redis/core/RedisTemplate.execute"))
			.isEqualTo(StackProfile.SPRING_DATA_REDIS);
		assertThat(StackProfile.group("org/springframework/util/Assert.notNull")).isEqualTo(StackProfile.SPRING);
		assertThat(StackProfile.group("io/github/ratelimit/core/DefaultRateLimiter.check"))
			.isEqualTo(StackProfile.ENGINE);
		assertThat(StackProfile.group("io/github/ratelimit/benchmarks/LoadDriver.next")).isEqualTo(StackProfile.DRIVER);
		assertThat(StackProfile.group("org/HdrHistogram/Recorder.recordValue")).isEqualTo(StackProfile.DRIVER);
		assertThat(StackProfile.group("java/util/HashMap.get")).isEqualTo(StackProfile.JDK);
		assertThat(StackProfile.group("jdk/internal/misc/Unsafe.park")).isEqualTo(StackProfile.JDK);
		assertThat(StackProfile.group("io/micrometer/core/instrument/Timer.record")).isEqualTo(StackProfile.OTHER_JAVA);
		assertThat(StackProfile.group("OptoRuntime::new_instance_C")).isEqualTo(StackProfile.JVM);
		assertThat(StackProfile.group("itable stub")).isEqualTo(StackProfile.JVM);
		assertThat(StackProfile.group("I2C/C2I adapters")).isEqualTo(StackProfile.JVM);
		assertThat(StackProfile.group("tcp_sendmsg_[k]")).isEqualTo(StackProfile.KERNEL);
		assertThat(StackProfile.group("__libc_write")).isEqualTo(StackProfile.NATIVE);
		assertThat(StackProfile.group("[unknown]")).isEqualTo(StackProfile.NATIVE);
	}

	@Test
	void selfCountsTheLeafAndTheJvmsOwnThreadsApart() {
		StackProfile profile = StackProfile.parse(COLLAPSED);
		assertThat(profile.samples()).isEqualTo(22);
		assertThat(nonZero(profile.self())).isEqualTo(Map.of(StackProfile.JDK, 5L, StackProfile.KERNEL, 8L,
				StackProfile.JVM, 2L, StackProfile.JIT, 6L, StackProfile.GC, 1L));
	}

	@Test
	void totalCountsEveryStackAGroupIsOnOnce() {
		assertThat(nonZero(StackProfile.parse(COLLAPSED).total())).isEqualTo(Map.ofEntries(
				Map.entry(StackProfile.DRIVER, 4L), Map.entry(StackProfile.ENGINE, 7L),
				Map.entry(StackProfile.LETTUCE, 5L), Map.entry(StackProfile.REACTOR, 2L),
				Map.entry(StackProfile.SPRING_DATA_REDIS, 2L), Map.entry(StackProfile.JDK, 15L),
				Map.entry(StackProfile.JVM, 2L), Map.entry(StackProfile.NATIVE, 8L), Map.entry(StackProfile.KERNEL, 8L),
				Map.entry(StackProfile.JIT, 6L), Map.entry(StackProfile.GC, 1L)));
	}

	@Test
	void byLayerChargesTheNearestLibraryCallerAndTheHandOffApart() {
		// every sample charged once: 22 in all
		assertThat(nonZero(StackProfile.parse(COLLAPSED).byLayer())).isEqualTo(Map.of(StackProfile.ENGINE, 4L,
				StackProfile.HAND_OFF, 3L, StackProfile.LETTUCE, 5L, StackProfile.REACTOR, 2L, StackProfile.JIT, 6L,
				StackProfile.GC, 1L, StackProfile.JDK, 1L));
	}

	private static Map<String, Long> nonZero(Map<String, Long> counts) {
		Map<String, Long> nonZero = new java.util.HashMap<>(counts);
		nonZero.values().removeIf((count) -> count == 0);
		return nonZero;
	}

	@Test
	void topFramesBySelfAndByTotal() {
		StackProfile profile = StackProfile.parse(COLLAPSED);
		assertThat(profile.top(1, true, (frame) -> true)).singleElement()
			.satisfies((frame) -> assertThat(frame.name()).isEqualTo("PhaseChaitin::Split"))
			.satisfies((frame) -> assertThat(frame.group()).isEqualTo(StackProfile.JIT));
		assertThat(profile.top(2, false, (frame) -> Set.of(StackProfile.ENGINE, StackProfile.LETTUCE).contains(frame.group())))
			.extracting(StackProfile.Frame::name, StackProfile.Frame::total)
			.containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("io/netty/channel/nio/NioIoHandler.run", 5L),
					org.assertj.core.groups.Tuple.tuple("io/lettuce/core/protocol/CommandHandler.write", 5L));
	}

}
