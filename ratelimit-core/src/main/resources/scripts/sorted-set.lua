-- Shared by the sliding window log and the concurrency set (included only when one of them is used): a sorted set of
-- the entries that hold quota, each scored with the time it was taken and counting until it is c.window old. Members
-- are numbers of the key's own sequence, kept in the member SEQ scored with the negated last number given out, so
-- every read that counts or trims skips it (trims from score 0, the count is ZCARD - 1, the oldest is at rank 1). A
-- refund removes its acquisition's members c.seq .. c.seq+cost-1, only while c.seq still has the acquisition's
-- score (architecture, "Sorted sets").
local SEQ = '#'

-- The score of the entry at index (0: the oldest; -1: the newest).
local function zset_score_at(c, index)
  if index >= 0 then index = index + 1 end
  return tonumber(redis.call('ZRANGE', c.key, index, index, 'WITHSCORES')[2])
end

-- The wait until the `over` oldest entries are window old.
local function zset_wait(c, over)
  return zset_score_at(c, over - 1) + c.window - c.now
end

local function zset_check(c)
  redis.call('ZREMRANGEBYSCORE', c.key, 0, num(c.now - c.window))
  local count = math.max(0, redis.call('ZCARD', c.key) - 1)
  c.seq = 0
  -- more than limit only after a smaller limit
  c.rb = math.max(0, c.limit - count)
  c.ra = c.limit - count - c.cost
  c.za = c.window
  c.zb = 0
  local newest = nil
  if count > 0 then
    newest = zset_score_at(c, -1)
    c.zb = newest + c.window - c.now
    -- a newest entry in the future (the clock went back) counts until it is window old
    c.za = math.max(c.za, c.zb)
  end
  local over = count + c.cost - c.limit
  if c.min > 0 and newest ~= nil and c.now - newest < c.min then
    c.ok = false
    c.retry = newest + c.min - c.now
    if over > 0 then
      c.retry = math.max(c.retry, zset_wait(c, over))
    end
  elseif over <= 0 then
    c.ok = true
  else
    c.ok = false
    c.retry = zset_wait(c, over)
  end
end

-- ZADD and ZREM in chunks: Lua's unpack() cannot spread more than a few thousand values.
local function zset_commit(c)
  c.seq = -tonumber(redis.call('ZINCRBY', c.key, num(-c.cost), SEQ)) - c.cost + 1
  local args = {}
  local score = num(c.now)
  for i = 0, c.cost - 1 do
    args[#args + 1] = score
    args[#args + 1] = num(c.seq + i)
    if #args >= 2 * CHUNK or i == c.cost - 1 then
      redis.call('ZADD', c.key, unpack(args))
      args = {}
    end
  end
  pexpire(c.key, c.za)
end

-- After commit (sliding window log): the retry-after a request of cost 1 gets right after this admission, or 0 when
-- it would be admitted. Also 0 when a minimum interval would outlast the wait for quota: the denial would then have
-- quota left before its end, which a denial cache does not keep.
local function zset_exhausted(c)
  -- check's count plus the cost commit added, plus 1, over the limit: 1 - c.ra (c.ra = limit - count - cost)
  local over = 1 - c.ra
  if over <= 0 then
    return 0
  end
  local retry = zset_wait(c, over)
  if c.min > 0 and zset_score_at(c, -1) + c.min - c.now > retry then
    return 0
  end
  return retry
end

local function zset_refund(c)
  if c.seq < 1 then
    return
  end
  local score = redis.call('ZSCORE', c.key, num(c.seq))
  if not score or tonumber(score) ~= c.now then
    return
  end
  local members = {}
  for i = 0, c.cost - 1 do
    members[#members + 1] = num(c.seq + i)
    if #members >= CHUNK or i == c.cost - 1 then
      redis.call('ZREM', c.key, unpack(members))
      members = {}
    end
  end
end
