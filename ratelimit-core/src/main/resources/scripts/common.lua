-- Prelude of every rate-limit script. The scripts are assembled as:
--   common.lua, then one file per algorithm used, then ratelimit.lua (the driver).
-- Each algorithm file registers itself in ALG under its two-letter code with three functions:
--   check(c)  reads the state of c.key at c.now and sets on c:
--               ok (admits c.cost), rb/zb (remaining and reset-after now),
--               ra/za (remaining and reset-after once c.cost is taken), retry (wait when not ok);
--             it writes nothing that changes a decision.
--   commit(c) takes c.cost (called only when every entry of the request is ok).
--   refund(c) gives back what request c.rid took (permits on release; otherwise best effort).
-- All times are microseconds. Numbers written to Redis go through num(): Lua's default conversion keeps only
-- 14 significant digits, which would round microsecond timestamps.
local ALG = {}
local EPS = 1e-9

local function num(x)
  return string.format('%.17g', x)
end

local function ceil_ms(us)
  local ms = math.ceil(us / 1000)
  if ms < 1 then return 1 end
  return ms
end

-- Shared by the sliding window log and the concurrency set: a sorted set of the entries that hold quota, each
-- scored with the time it was taken; an entry stops counting once it is c.window old.
local function zset_check(c)
  redis.call('ZREMRANGEBYSCORE', c.key, '-inf', num(c.now - c.window))
  local count = redis.call('ZCARD', c.key)
  c.rb = c.limit - count
  c.ra = c.limit - count - c.cost
  c.za = c.window
  c.zb = 0
  local newest = nil
  if count > 0 then
    newest = tonumber(redis.call('ZRANGE', c.key, -1, -1, 'WITHSCORES')[2])
    c.zb = newest + c.window - c.now
  end
  if c.min > 0 and newest ~= nil and c.now - newest < c.min then
    c.ok = false
    c.retry = newest + c.min - c.now
    if count + c.cost > c.limit then
      local at = tonumber(redis.call('ZRANGE', c.key, count + c.cost - c.limit - 1, count + c.cost - c.limit - 1, 'WITHSCORES')[2])
      c.retry = math.max(c.retry, at + c.window - c.now)
    end
  elseif count + c.cost <= c.limit then
    c.ok = true
  else
    c.ok = false
    local at = tonumber(redis.call('ZRANGE', c.key, count + c.cost - c.limit - 1, count + c.cost - c.limit - 1, 'WITHSCORES')[2])
    c.retry = at + c.window - c.now
  end
end

local function zset_member(c, i)
  if i == 1 then return c.rid end
  return c.rid .. '#' .. i
end

local function zset_commit(c)
  local args = {}
  for i = 1, c.cost do
    args[#args + 1] = num(c.now)
    args[#args + 1] = zset_member(c, i)
  end
  redis.call('ZADD', c.key, unpack(args))
  redis.call('PEXPIRE', c.key, ceil_ms(c.window))
end

local function zset_refund(c)
  local members = {}
  for i = 1, c.cost do
    members[i] = zset_member(c, i)
  end
  redis.call('ZREM', c.key, unpack(members))
end
