package io.github.ratelimit.spring.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Partners' limits kept in Redis for every instance: one hash per partner, {@code <prefix>client:{<partner>}}, a
 * field {@code e:<policy>[|<partition>]} per quota ({@code remaining|resetAt|next|limit|window}, milliseconds of
 * Redis's clock) and {@code blocked} ({@code until|next}: the end of a Retry-After and the next turn of the calls
 * released after it). Each call is one script (atomic, so two instances
 * never take the same turn) and waits at most {@code timeout}; its failure is signalled, for
 * {@link SharedPartnerState} to fall back. The key expires one window after the last reset it holds (at least a second from now).
 */
final class RedisPartnerState implements PartnerState {

	private static final String COMMON = """
			local t = redis.call('TIME')
			local now = t[1] * 1000 + math.floor(t[2] / 1000)
			local function parse(v)
			  local r, reset, nxt, limit, window = string.match(v, '^(%d+)|(%d+)|(%d+)|(%d+)|(%d+)$')
			  if not r then return nil end
			  return { tonumber(r), tonumber(reset), tonumber(nxt), tonumber(limit), tonumber(window) }
			end
			local function encode(r, reset, nxt, limit, window)
			  return string.format('%d|%d|%d|%d|%d', r, reset, nxt, limit, window)
			end
			""";

	/** Takes a turn: PartnerBook.reserve and PartnerBook.turn, in Lua; ARGV: pace-below, budget ms. */
	private static final RedisScript<Long> RESERVE = PrecomputedScript.of(COMMON + """
			local pace = tonumber(ARGV[1])
			local budget = math.max(0, tonumber(ARGV[2]))
			local b = redis.call('HGET', KEYS[1], 'blocked')
			local bu, bn = 0, 0
			if b then bu, bn = string.match(b, '^(%d+)|(%d+)$') end
			bu, bn = tonumber(bu) or 0, tonumber(bn) or 0
			local release = math.max(bu, bn)
			if b and release <= now then redis.call('HDEL', KEYS[1], 'blocked') end
			local wait = math.max(0, release - now)
			local spacing = 1000
			local updates = {}
			local all = redis.call('HGETALL', KEYS[1])
			for i = 1, #all, 2 do
			  local field = all[i]
			  if string.sub(field, 1, 2) == 'e:' then
			    local e = parse(all[i + 1])
			    if not e or e[2] + math.max(e[5], 1000) <= now then
			      redis.call('HDEL', KEYS[1], field)
			    else
			      local r, reset, nxt, limit, window = e[1], e[2], e[3], e[4], e[5]
			      local gap = 1000
			      if limit > 0 and window > 0 then gap = math.max(1, math.floor(window / limit)) end
			      local paced
			      if limit > 0 then paced = r < limit * pace else paced = r == 0 end
			      local turn
			      if r > 0 and not paced then
			        turn = now
			      elseif r > 0 then
			        turn = math.max(now, nxt)
			        nxt = turn + math.floor(math.max(0, reset - turn) / r)
			      else
			        turn = math.max(now, reset, nxt)
			        nxt = turn + gap
			      end
			      if turn - now > wait then wait = turn - now end
			      if gap < spacing then spacing = gap end
			      table.insert(updates, { field, encode(math.max(0, r - 1), reset, nxt, limit, window) })
			    end
			  end
			end
			if wait > budget then return wait end
			for _, u in ipairs(updates) do redis.call('HSET', KEYS[1], u[1], u[2]) end
			if release > now then
			  redis.call('HSET', KEYS[1], 'blocked', string.format('%d|%d', bu, now + wait + spacing))
			  local ttl = redis.call('PTTL', KEYS[1])
			  if ttl < wait + spacing + 1000 then redis.call('PEXPIRE', KEYS[1], wait + spacing + 1000) end
			end
			return wait
			""", Long.class);

	/** Records a response: PartnerBook.learn in Lua; ARGV: retry-after ms (-1: none), most entries, then 5 per quota. */
	private static final RedisScript<Long> LEARN = PrecomputedScript.of(COMMON + """
			local expireAt = now + 1000
			local retryAfter = tonumber(ARGV[1])
			if retryAfter > 0 then
			  local b = redis.call('HGET', KEYS[1], 'blocked')
			  local bu, bn = 0, 0
			  if b then bu, bn = string.match(b, '^(%d+)|(%d+)$') end
			  bu, bn = math.max(tonumber(bu) or 0, now + retryAfter), tonumber(bn) or 0
			  redis.call('HSET', KEYS[1], 'blocked', string.format('%d|%d', bu, bn))
			  expireAt = math.max(expireAt, bu + 1000, bn + 1000)
			end
			local count = 0
			for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
			  if string.sub(f, 1, 2) == 'e:' then count = count + 1 end
			end
			for i = 3, #ARGV, 5 do
			  local field = 'e:' .. ARGV[i]
			  local r = tonumber(ARGV[i + 1])
			  local resetMillis = tonumber(ARGV[i + 2]) * 1000
			  local resetAt = now + resetMillis
			  local limit, window = tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
			  local old = redis.call('HGET', KEYS[1], field)
			  local e = old and parse(old)
			  if old or count < tonumber(ARGV[2]) then
			    if not old then count = count + 1 end
			    local nxt = 0
			    if e then
			      nxt = e[3]
			      if resetAt <= e[2] + 1000 then
			        r = math.min(r, e[1])
			        resetAt = math.max(resetAt, e[2])
			      end
			      if limit == 0 then limit = math.max(e[4], r) end
			      if window == 0 then window = math.max(e[5], resetMillis) end
			    else
			      if limit == 0 then limit = r end
			      if window == 0 then window = resetMillis end
			    end
			    redis.call('HSET', KEYS[1], field, encode(r, resetAt, nxt, limit, window))
			    expireAt = math.max(expireAt, resetAt + math.max(window, 1000))
			  end
			end
			local ttl = redis.call('PTTL', KEYS[1])
			if ttl > 0 then expireAt = math.max(expireAt, now + ttl) end
			redis.call('PEXPIRE', KEYS[1], math.max(1000, expireAt - now))
			return 1
			""", Long.class);

	/** Redis's time and the whole hash. */
	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> READ = PrecomputedScript.of(COMMON + """
			local out = { string.format('%d', now) }
			for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do table.insert(out, v) end
			return out
			""", List.class);

	private final @Nullable ReactiveStringRedisTemplate reactive;

	private final StringRedisTemplate blocking;

	private final String prefix;

	private final Duration timeout;

	private volatile boolean connected;

	/**
	 * @param factory the connection factory
	 * @param prefix the key prefix ({@code ratelimit.key-prefix})
	 * @param timeout the longest a call waits for Redis
	 */
	RedisPartnerState(RedisConnectionFactory factory, String prefix, Duration timeout) {
		this.reactive = (factory instanceof ReactiveRedisConnectionFactory reactiveFactory)
				? new ReactiveStringRedisTemplate(reactiveFactory) : null;
		this.blocking = new StringRedisTemplate(factory);
		this.prefix = prefix;
		this.timeout = timeout;
	}

	/** @return the hash of a partner (a name that is long or holds braces or spaces is digested) */
	String key(String partner) {
		return this.prefix + "client:{" + PartnerHeaders.safe(partner) + "}";
	}

	@Override
	public Mono<Duration> reserve(String partner, double paceBelow, Duration budget) {
		return call(RESERVE, partner, List.of(Double.toString(paceBelow), Long.toString(budget.toMillis())))
			.map(Duration::ofMillis);
	}

	@Override
	public Mono<Void> learn(String partner, PartnerResponse response) {
		List<String> args = new ArrayList<>();
		args.add(Long.toString((response.retryAfter() != null) ? response.retryAfter().toMillis() : -1));
		args.add(Integer.toString(PartnerHeaders.MAX_QUOTAS));
		for (PartnerQuota quota : response.quotas()) {
			args.add(quota.entry());
			args.add(Long.toString(quota.remaining()));
			args.add(Long.toString(quota.resetSeconds()));
			args.add(Long.toString((quota.limit() != null) ? quota.limit() : 0));
			args.add(Long.toString((quota.windowSeconds() != null) ? quota.windowSeconds() * 1000 : 0));
		}
		return call(LEARN, partner, args).then();
	}

	@Override
	public Mono<Map<String, Object>> describe(String partner) {
		return call(READ, partner, List.of()).map(RedisPartnerState::describe);
	}

	private static Map<String, Object> describe(List<?> read) {
		long now = Long.parseLong(String.valueOf(read.get(0)));
		PartnerBook book = new PartnerBook();
		for (int i = 1; i + 1 < read.size(); i += 2) {
			String field = String.valueOf(read.get(i));
			String[] figures = String.valueOf(read.get(i + 1)).split("\\|");
			if (field.equals("blocked")) {
				book.restoreBlockedUntil(Long.parseLong(figures[0]));
			}
			else if (field.startsWith("e:") && figures.length == 5) {
				PartnerBook.Entry entry = new PartnerBook.Entry();
				entry.remaining = Long.parseLong(figures[0]);
				entry.resetAt = Long.parseLong(figures[1]);
				entry.next = Long.parseLong(figures[2]);
				entry.limit = Long.parseLong(figures[3]);
				entry.windowMillis = Long.parseLong(figures[4]);
				book.restore(field.substring(2), entry);
			}
		}
		return book.describe(now);
	}

	/**
	 * One script call within the timeout. Until a call has gone through, it starts on a bounded elastic thread:
	 * Spring Data Redis opens the first connection blocking, which must not happen on a WebClient's event loop.
	 */
	private <T> Mono<T> call(RedisScript<T> script, String partner, List<String> args) {
		List<String> keys = List.of(key(partner));
		ReactiveStringRedisTemplate template = this.reactive;
		Mono<T> call;
		if (template != null) {
			call = template.execute(script, keys, args).next();
			if (!this.connected) {
				call = call.subscribeOn(Schedulers.boundedElastic()).doOnNext((reply) -> this.connected = true);
			}
		}
		else {
			call = Mono.fromCallable(() -> this.blocking.execute(script, keys, args.toArray()))
				.subscribeOn(Schedulers.boundedElastic());
		}
		return call.timeout(this.timeout);
	}

}
