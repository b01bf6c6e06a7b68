-- Prelude of every rate-limit script. The scripts are assembled as:
--   common.lua, then one file per algorithm used, then ratelimit.lua (the driver).
-- Each algorithm file registers itself in ALG under its two-letter code with three functions:
--   check(c)  reads the state of c.key at c.now and sets on c:
--               ok (admits c.cost), rb/zb (remaining and reset-after now),
--               ra/za (remaining and reset-after once c.cost is taken), retry (wait when not ok);
--             it writes nothing that changes a decision.
--   commit(c) takes c.cost (called only when every entry of the request is ok).
--   refund(c) gives back what request c.rid took at time c.now (the time of the acquire).
-- All times are microseconds. Stored numbers stay small where fractions matter (durations, counts, tokens), never
-- fractional absolute timestamps: a double near 1.7e15 resolves only a quarter microsecond. Numbers written to
-- Redis go through num(): Lua's default conversion keeps only 14 significant digits.
local ALG = {}
local EPS = 1e-12
local EXPLICIT_TIME = ARGV[2] ~= ''
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

local function pexpire(key, us)
  local ms = math.ceil(us / 1000)
  if ms < 1 then ms = 1 end
  if EXPLICIT_TIME and ms < EXPLICIT_TTL_FLOOR_MS then ms = EXPLICIT_TTL_FLOOR_MS end
  redis.call('PEXPIRE', key, string.format('%d', ms))
end

-- Shared by the sliding window log and the concurrency set: a sorted set of the entries that hold quota, each
-- scored with the time it was taken; an entry stops counting once it is c.window old.
local function zset_score_at(c, index)
  return tonumber(redis.call('ZRANGE', c.key, index, index, 'WITHSCORES')[2])
end

local function zset_check(c)
  redis.call('ZREMRANGEBYSCORE', c.key, '-inf', num(c.now - c.window))
  local count = redis.call('ZCARD', c.key)
  c.rb = c.limit - count
  c.ra = c.limit - count - c.cost
  c.za = c.window
  c.zb = 0
  local newest = nil
  if count > 0 then
    newest = zset_score_at(c, -1)
    c.zb = newest + c.window - c.now
  end
  local over = count + c.cost - c.limit
  if c.min > 0 and newest ~= nil and c.now - newest < c.min then
    c.ok = false
    c.retry = newest + c.min - c.now
    if over > 0 then
      c.retry = math.max(c.retry, zset_score_at(c, over - 1) + c.window - c.now)
    end
  elseif over <= 0 then
    c.ok = true
  else
    c.ok = false
    c.retry = zset_score_at(c, over - 1) + c.window - c.now
  end
end

local function zset_member(c, i)
  if i == 1 then return c.rid end
  return c.rid .. '#' .. i
end

-- ZADD and ZREM in chunks: Lua's unpack() cannot spread more than a few thousand values.
local function zset_commit(c)
  local args = {}
  local score = num(c.now)
  for i = 1, c.cost do
    args[#args + 1] = score
    args[#args + 1] = zset_member(c, i)
    if #args >= 2 * CHUNK or i == c.cost then
      redis.call('ZADD', c.key, unpack(args))
      args = {}
    end
  end
  pexpire(c.key, c.window)
end

local function zset_refund(c)
  local members = {}
  for i = 1, c.cost do
    members[#members + 1] = zset_member(c, i)
    if #members >= CHUNK or i == c.cost then
      redis.call('ZREM', c.key, unpack(members))
      members = {}
    end
  end
end
