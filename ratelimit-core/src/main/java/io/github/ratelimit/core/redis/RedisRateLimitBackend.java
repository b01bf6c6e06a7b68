package io.github.ratelimit.core.redis;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.ratelimit.core.Algorithm;
import io.github.ratelimit.core.PolicyDecision;
import io.github.ratelimit.core.RateLimitBackend;
import io.github.ratelimit.core.RateLimitKeys;
import io.github.ratelimit.core.RateLimitPolicy;
import io.github.ratelimit.core.RateLimitRequest;
import io.github.ratelimit.core.RateLimitRequest.Entry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Counters in Redis, shared by every instance. A request is one EVALSHA of one Lua script that checks every entry
 * and takes the cost of each only when all admit.
 * <p>
 * Keys are hash-tagged by identity, so on Redis Cluster all policies of one identity share a slot and are still one
 * atomic call. Entries of different identities in different slots are evaluated per slot; when one slot denies, the
 * slots that admitted get their cost back in one more call, so a denied request uses up no quota (for that short
 * moment the quota is held, which can deny a concurrent request that would otherwise have passed).
 */
public final class RedisRateLimitBackend implements RateLimitBackend {

	private static final String ACQUIRE = "a";

	private static final String RELEASE = "r";

	/** Figures per entry in an acquire reply. */
	private static final int FIGURES = 6;

	private final StringRedisTemplate template;

	private final @Nullable ReactiveStringRedisTemplate reactiveTemplate;

	private final RateLimitKeys keys;

	private final boolean cluster;

	private final LuaScripts scripts = new LuaScripts();

	/**
	 * A backend with the default key prefix {@value RateLimitKeys#DEFAULT_PREFIX}.
	 * @param connectionFactory the Redis connection (Lettuce for the non-blocking form)
	 */
	public RedisRateLimitBackend(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, RateLimitKeys.DEFAULT_PREFIX);
	}

	/**
	 * A backend.
	 * @param connectionFactory the Redis connection (Lettuce for the non-blocking form)
	 * @param keyPrefix the prefix of every key
	 */
	public RedisRateLimitBackend(RedisConnectionFactory connectionFactory, String keyPrefix) {
		this.keys = new RateLimitKeys(keyPrefix);
		this.template = new StringRedisTemplate(connectionFactory);
		this.reactiveTemplate = (connectionFactory instanceof ReactiveRedisConnectionFactory reactive)
				? new ReactiveStringRedisTemplate(reactive) : null;
		this.cluster = (connectionFactory instanceof LettuceConnectionFactory lettuce) ? lettuce.isClusterAware()
				: isCluster(connectionFactory);
	}

	private static boolean isCluster(RedisConnectionFactory connectionFactory) {
		try {
			connectionFactory.getClusterConnection().close();
			return true;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	@Override
	public List<PolicyDecision> acquire(RateLimitRequest request, String requestId) {
		List<Call> calls = calls(request.entries(), requestId, request.explicitTimeMicros());
		List<List<Long>> results = new ArrayList<>(calls.size());
		for (Call call : calls) {
			results.add(execute(call, ACQUIRE));
		}
		List<Call> refunds = refundsNeeded(calls, results);
		for (Call call : refunds) {
			execute(call, RELEASE);
		}
		return decisions(request.entries(), calls, results);
	}

	@Override
	public Mono<List<PolicyDecision>> acquireAsync(RateLimitRequest request, String requestId) {
		List<Call> calls = calls(request.entries(), requestId, request.explicitTimeMicros());
		return Flux.fromIterable(calls)
			.flatMapSequential((call) -> executeAsync(call, ACQUIRE))
			.collectList()
			.flatMap((results) -> {
				List<Call> refunds = refundsNeeded(calls, results);
				return Flux.fromIterable(refunds)
					.flatMap((call) -> executeAsync(call, RELEASE))
					.then(Mono.fromSupplier(() -> decisions(request.entries(), calls, results)));
			});
	}

	@Override
	public void release(List<Entry> entries, String requestId, long explicitTimeMicros) {
		for (Call call : calls(entries, requestId, explicitTimeMicros)) {
			execute(call, RELEASE);
		}
	}

	@Override
	public Mono<Void> releaseAsync(List<Entry> entries, String requestId, long explicitTimeMicros) {
		return Flux.fromIterable(calls(entries, requestId, explicitTimeMicros))
			.flatMap((call) -> executeAsync(call, RELEASE))
			.then();
	}

	/**
	 * The storage key of a policy and identity.
	 * @param policy the policy
	 * @param identity the raw identity
	 * @return the Redis key
	 */
	public String key(RateLimitPolicy policy, String identity) {
		return this.keys.key(policy, identity);
	}

	/**
	 * Whether the connection is to a Redis Cluster (entries are then grouped by hash slot).
	 * @return true on Cluster
	 */
	public boolean isCluster() {
		return this.cluster;
	}

	/** Splits entries into one script call per hash slot (a single call unless on Cluster). */
	private List<Call> calls(List<Entry> entries, String requestId, long explicitTimeMicros) {
		Map<Integer, Call> bySlot = new LinkedHashMap<>();
		for (int i = 0; i < entries.size(); i++) {
			Entry entry = entries.get(i);
			String key = this.keys.key(entry.policy(), entry.identity());
			int slot = this.cluster ? ClusterSlotHashUtil.calculateSlot(key) : 0;
			bySlot.computeIfAbsent(slot, (s) -> new Call(requestId, explicitTimeMicros)).add(i, key, entry);
		}
		return new ArrayList<>(bySlot.values());
	}

	private List<Long> execute(Call call, String mode) {
		return toLongs(this.template.execute(script(call), call.keys, call.args(mode)));
	}

	private Mono<List<Long>> executeAsync(Call call, String mode) {
		ReactiveStringRedisTemplate reactive = this.reactiveTemplate;
		if (reactive == null) {
			return Mono.fromCallable(() -> execute(call, mode)).subscribeOn(Schedulers.boundedElastic());
		}
		return reactive.execute(script(call), call.keys, List.of(call.args(mode)))
			.collectList()
			.map(RedisRateLimitBackend::flatten);
	}

	@SuppressWarnings("rawtypes")
	private RedisScript<List> script(Call call) {
		return this.scripts.forAlgorithms(call.algorithms);
	}

	@SuppressWarnings("rawtypes")
	private static List<Long> flatten(List<List> emitted) {
		List<Long> values = new ArrayList<>();
		for (List list : emitted) {
			values.addAll(toLongs(list));
		}
		return values;
	}

	private static List<Long> toLongs(@Nullable List<?> result) {
		List<Long> values = new ArrayList<>();
		if (result != null) {
			for (Object value : result) {
				values.add((value instanceof Number number) ? number.longValue() : Long.parseLong(value.toString()));
			}
		}
		return values;
	}

	/** When any call denied, the calls whose entries all admitted (and so took their cost) must give it back. */
	private static List<Call> refundsNeeded(List<Call> calls, List<List<Long>> results) {
		if (calls.size() < 2 || allAdmit(results)) {
			return List.of();
		}
		List<Call> admitted = new ArrayList<>();
		for (int i = 0; i < calls.size(); i++) {
			if (allAdmit(List.of(results.get(i)))) {
				admitted.add(calls.get(i));
			}
		}
		return admitted;
	}

	private static boolean allAdmit(List<List<Long>> results) {
		for (List<Long> result : results) {
			for (int i = 0; i < result.size(); i += FIGURES) {
				if (result.get(i) != 1L) {
					return false;
				}
			}
		}
		return true;
	}

	/**
	 * Reads the scripts' six figures per entry: admits, remaining and reset once taken, remaining and reset as is,
	 * retry-after. The request is admitted only when every entry of every call admits; then the "taken" figures
	 * apply, otherwise nothing was taken (or it was given back) and the "as is" figures apply.
	 */
	private static List<PolicyDecision> decisions(List<Entry> entries, List<Call> calls, List<List<Long>> results) {
		boolean admitted = allAdmit(results);
		int taken = admitted ? 1 : 3;
		PolicyDecision[] decisions = new PolicyDecision[entries.size()];
		for (int c = 0; c < calls.size(); c++) {
			Call call = calls.get(c);
			List<Long> result = results.get(c);
			for (int j = 0; j < call.indexes.size(); j++) {
				int at = j * FIGURES;
				Entry entry = entries.get(call.indexes.get(j));
				decisions[call.indexes.get(j)] = PolicyDecision.of(entry, result.get(at) == 1L,
						result.get(at + taken), result.get(at + taken + 1), result.get(at + 5));
			}
		}
		return List.of(decisions);
	}

	/** One script call: the entries of one hash slot. */
	private static final class Call {

		private final String requestId;

		private final long explicitTimeMicros;

		private final List<Integer> indexes = new ArrayList<>();

		private final List<String> keys = new ArrayList<>();

		private final List<Entry> entries = new ArrayList<>();

		private final Set<Algorithm> algorithms = EnumSet.noneOf(Algorithm.class);

		Call(String requestId, long explicitTimeMicros) {
			this.requestId = requestId;
			this.explicitTimeMicros = explicitTimeMicros;
		}

		void add(int index, String key, Entry entry) {
			this.indexes.add(index);
			this.keys.add(key);
			this.entries.add(entry);
			this.algorithms.add(entry.policy().algorithm());
		}

		Object[] args(String mode) {
			Object[] args = new Object[3 + this.entries.size() * 6];
			args[0] = mode;
			args[1] = (this.explicitTimeMicros >= 0) ? Long.toString(this.explicitTimeMicros) : "";
			args[2] = this.requestId;
			int i = 3;
			for (Entry entry : this.entries) {
				RateLimitPolicy policy = entry.policy();
				args[i++] = policy.algorithm().code();
				args[i++] = Long.toString(policy.limit());
				args[i++] = Long.toString(policy.windowMicros());
				args[i++] = Long.toString(policy.burst());
				args[i++] = Long.toString(entry.cost());
				args[i++] = Long.toString(policy.minIntervalMicros());
			}
			return args;
		}

	}

}
