-- Prelude of every rate-limit script but the straight-through ones (fast/). The scripts are assembled as:
--   the lines the assembler writes (EXPLICIT_TIME: whether the call passes its time; for the scripts of one policy,
--   its parameters CODE, LIMIT, WINDOW, BURST, MIN), common.lua, sorted-set.lua (when the sliding window log or
--   concurrency is used), then one file per algorithm used, then the driver: ratelimit.lua, or for the calls of one
--   policy single.lua (defining decide) and single-call.lua or batch-call.lua (calling it).
-- Each algorithm file registers itself in ALG under its two-letter code with three functions:
--   check(c)  reads the state of c.key at c.now and sets on c:
--               ok (admits c.cost), rb/zb (remaining and reset-after now),
--               ra/za (remaining and reset-after once c.cost is taken), retry (wait when not ok);
--             it writes nothing that changes a decision.
--   commit(c) takes c.cost (called only when every entry of the request is ok).
--   exhausted(c), optional, used by single.lua only: after commit, the retry-after a request of cost 1 would get
--             right after it (check's retry on the state commit wrote), or 0 when such a request would be admitted.
--   refund(c) gives back what request c.rid took at time c.now (the time of the acquire); the sorted sets name it
--             by c.seq, the first member the acquire took (commit sets c.seq, check sets it to 0).
-- All times are microseconds. Stored numbers stay small where fractions matter (durations, counts, tokens), never
-- fractional absolute timestamps: a double near 1.7e15 resolves only a quarter microsecond. Numbers written to
-- Redis as text go through num(): Lua's default conversion keeps only 14 significant digits. (The token bucket packs
-- its state with struct instead; a TTL goes as an integer number of milliseconds, ttl_ms.)
local ALG = {}
local EPS = 1e-12
-- With an explicit time (tests, replays) decisions do not follow the real clock, but TTLs do: keys then live at
-- least ten minutes so that a replay faster than real time does not lose state it still needs.
local EXPLICIT_TTL_FLOOR_MS = 600000
local CHUNK = 500

local function num(x)
  return string.format('%.17g', x)
end

-- Tolerance for comparing a quantity of magnitude up to m: relative, so it means the same at 1 and at 1e9.
local function tol(m)
  return EPS * math.max(1, m)
end

-- A TTL of us microseconds in whole milliseconds (an integer, which Redis reads exactly from a Lua number).
local function ttl_ms(us)
  local ms = math.ceil(us / 1000)
  if ms < 1 then ms = 1 end
  if EXPLICIT_TIME and ms < EXPLICIT_TTL_FLOOR_MS then ms = EXPLICIT_TTL_FLOOR_MS end
  return ms
end

local function pexpire(key, us)
  redis.call('PEXPIRE', key, ttl_ms(us))
end

-- Whether a key may keep its TTL: it ends no earlier than the us a write would set. The windows' writes then
-- change only the count (a PEXPIRE costs Redis 7.0.15 about 0.7 µs, more than the PTTL); they set their TTL a
-- millisecond longer (window_ttl), so that the later writes of one window find it covering. Never with an explicit
-- time (its TTL floor counts from the last write).
local function keeps_ttl(key, us)
  return not EXPLICIT_TIME and redis.call('PTTL', key) >= ttl_ms(us)
end

local function window_ttl(key, us)
  pexpire(key, us + 1000)
end

-- How much longer than its state needs a busy key's TTL is set (token bucket, GCRA), so that the writes of the next
-- second keep it: a second, at most a full refill (burst * window / limit).
local function ttl_slack_ms(c)
  return math.min(1000, math.ceil(c.burst * c.window / c.limit / 1000))
end


-- Refunds of counted algorithms are made once per request: the key keeps the last few refunded request ids in its
-- field u (only refunds write it). A refund retried after a client timeout whose first attempt did run finds its id.
local REFUNDS_KEPT = 8

local function refunded_before(key, rid)
  if rid == '' then
    return false
  end
  local seen = redis.call('HGET', key, 'u')
  if seen and string.find(seen, ' ' .. rid .. ' ', 1, true) then
    return true
  end
  local kept = ' ' .. rid .. ' '
  local n = 1
  if seen then
    for id in string.gmatch(seen, '%S+') do
      if n >= REFUNDS_KEPT then break end
      kept = kept .. id .. ' '
      n = n + 1
    end
  end
  redis.call('HSET', key, 'u', kept)
  return false
end
