package io.github.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import io.github.ratelimit.core.redis.BackendConnection.NativeConnection;
import io.github.ratelimit.core.redis.RedisRateLimitBackend.ScriptMode;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Sends script calls: EVALSHA (EVAL on NOSCRIPT) or FCALL (FUNCTION LOAD when not found), failing with Spring's
 * exceptions; a factory other than Lettuce's runs them through the template (architecture, "The connection").
 */
final class ScriptTransport {

	private static final Log logger = LogFactory.getLog(RedisRateLimitBackend.class);

	private final BackendConnection connection;

	private final boolean functions;

	private volatile boolean functionsUnsupportedLogged;

	ScriptTransport(BackendConnection connection, ScriptMode mode) {
		this.connection = connection;
		if (mode == ScriptMode.FUNCTIONS && !connection.isLettuce()) {
			logger.warn("Redis functions need the Lettuce client; the connection factory is "
					+ connection.factory().getClass().getName() + ", so rate-limit scripts run with EVALSHA");
		}
		this.functions = (mode == ScriptMode.FUNCTIONS) && connection.isLettuce();
	}

	ScriptMode mode() {
		return this.functions ? ScriptMode.FUNCTIONS : ScriptMode.EVALSHA;
	}

	/** A call, on a bounded elastic thread until one has gone through (connecting blocks) or without Lettuce. */
	@SuppressWarnings({ "rawtypes", "unchecked" })
	Mono<List<Long>> call(EncodedCall call) {
		if (!this.connection.isLettuce()) {
			return Mono
				.fromCallable(() -> ScriptReply.toLongs(this.connection.template()
					.execute((RedisScript<List>) call.script(), call.keyStrings(), call.argStrings())))
				.subscribeOn(Schedulers.boundedElastic());
		}
		this.connection.forgetIfRestarted();
		Mono<List<Long>> result = Mono.fromCompletionStage(() -> send(call));
		if (this.connection.isConnected()) {
			return result;
		}
		return result.subscribeOn(Schedulers.boundedElastic()).doOnSuccess((ok) -> this.connection.connected());
	}

	/** Sends a call on the native connection, from any thread (an event loop included); never throws. */
	CompletableFuture<List<Long>> send(EncodedCall call) {
		NativeConnection connection;
		CompletionStage<List<Long>> first;
		try {
			connection = this.connection.nativeConnection();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		try {
			first = evaluate(connection, call);
		}
		catch (RuntimeException ex) {
			// a client shut down under the connection refuses the command at once
			first = CompletableFuture.failedFuture(ex);
		}
		return first.exceptionallyCompose((ex) -> {
			RuntimeException failure = BackendConnection.translate(ex);
			if (!hasMessage(failure, "Connection is closed") && !hasMessage(failure, "Connection closed")) {
				return CompletableFuture.failedFuture(failure);
			}
			// once more on a new connection, opened off the caller's thread
			this.connection.forget(connection);
			return onBoundedElastic(() -> evaluate(this.connection.nativeConnection(), call))
				.exceptionallyCompose((retryFailure) -> CompletableFuture
					.failedFuture(BackendConnection.translate(retryFailure)));
		}).toCompletableFuture();
	}

	/** Sends a call on the given connection (a Cluster node's), once, failing with Spring's exceptions. */
	CompletableFuture<List<Long>> sendTo(NativeConnection connection, EncodedCall call) {
		try {
			return evaluate(connection, call).toCompletableFuture()
				.exceptionallyCompose((ex) -> CompletableFuture.failedFuture(BackendConnection.translate(ex)));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(BackendConnection.translate(ex));
		}
	}

	private CompletionStage<List<Long>> evaluate(NativeConnection connection, EncodedCall call) {
		if (this.functions) {
			return callFunction(connection, call);
		}
		return connection.commands()
			.<List<Object>>evalsha(call.script().getSha1(), ScriptOutputType.MULTI, call.keys(), call.args())
			.exceptionallyCompose((ex) -> hasMessage(ex, "NOSCRIPT") ? connection.commands()
				.eval(call.script().getScriptAsString().getBytes(StandardCharsets.UTF_8), ScriptOutputType.MULTI,
						call.keys(), call.args())
					: CompletableFuture.failedFuture(ex))
			.thenApply(ScriptReply::toLongs);
	}

	/** FCALL; a function not found (never loaded, or lost) is loaded on a bounded elastic thread and called again. */
	private CompletionStage<List<Long>> callFunction(NativeConnection connection, EncodedCall call) {
		String name = LuaScripts.functionName(call.script());
		return connection.commands()
			.<List<Object>>fcall(name, ScriptOutputType.MULTI, call.keys(), call.args())
			.exceptionallyCompose((ex) -> {
				if (hasMessage(ex, "Function not found")) {
					return onBoundedElastic(() -> loadFunction(connection, call))
						.thenCompose((loaded) -> connection.commands()
							.<List<Object>>fcall(name, ScriptOutputType.MULTI, call.keys(), call.args()));
				}
				return CompletableFuture
					.failedFuture(hasMessage(ex, "unknown command") ? functionsUnsupported(ex) : ex);
			})
			.thenApply(ScriptReply::toLongs);
	}

	/** Loads the library of a call's script: on a Cluster on every master, else on the connection's server. */
	@SuppressWarnings("unchecked")
	private static CompletionStage<?> loadFunction(NativeConnection connection, EncodedCall call) {
		String library = LuaScripts.library(call.script());
		if (connection.commands() instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
			// Lettuce sends FUNCTION LOAD to one node of a Cluster (unlike SCRIPT LOAD, which goes to every node)
			return ((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster).upstream()
				.commands()
				.functionLoad(library, true);
		}
		return connection.commands().functionLoad(library, true);
	}

	private RuntimeException functionsUnsupported(Throwable error) {
		String message = "Redis functions need Redis 7 or later, and this Redis does not know FCALL: run the "
				+ "rate-limit scripts with EVALSHA (ratelimit.redis.script-mode=evalsha) or upgrade Redis";
		if (!this.functionsUnsupportedLogged) {
			this.functionsUnsupportedLogged = true;
			logger.error(message + "; every rate-limit decision fails over to its failure mode until then");
		}
		return new InvalidDataAccessApiUsageException(message, error);
	}

	/** A call made on a bounded elastic thread: it may open a connection, which blocks. */
	private static <T> CompletableFuture<T> onBoundedElastic(Supplier<? extends CompletionStage<T>> call) {
		return CompletableFuture.supplyAsync(call, (task) -> Schedulers.boundedElastic().schedule(task))
			.thenCompose((started) -> started);
	}

	static boolean hasMessage(Throwable error, String text) {
		for (Throwable cause = error; cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && cause.getMessage().contains(text)) {
				return true;
			}
		}
		return false;
	}

}
