-- Single-entry acquire of the token bucket, written straight through: the same arithmetic and state as
-- token-bucket.lua's check and commit (keep the two in step), without the driver's tables and closures, which cost
-- Redis about a third of the call. It defines decide(key, cost, now) as single.lua does. The state is one string
-- (its layout: architecture, "The token bucket's state"): GET, then one SET ... PX that keeps what follows the tokens
-- and their time.
local function decide(key, cost, now)
  local value = redis.call('GET', key)
  local tokens = BURST
  local at = now
  if value then
    local s
    tokens, s = struct.unpack('<dd', value)
    tokens = math.min(BURST, tokens)
    if now - s > 0 then
      tokens = math.min(BURST, tokens + (now - s) * LIMIT / WINDOW)
    else
      at = s
    end
  end
  local ahead = at - now
  local t = 1e-12 * math.max(1, BURST)
  if tokens + t >= cost then
    local left = math.max(0, tokens - cost)
    local za = math.ceil((BURST - left) * WINDOW / LIMIT) + ahead
    local ms = math.ceil(za / 1000)
    if ms < 1 then ms = 1 end
    if EXPLICIT_TIME and ms < 600000 then ms = 600000 end
    local packed = struct.pack('<dd', left, at)
    if value and #value > 16 then
      packed = packed .. string.sub(value, 17)
      -- leases' records: keep lease.lua's TTL (their lapse, then a refill) when it is the longer
      if #value > 24 then ms = math.max(ms, redis.call('PTTL', key)) end
    end
    redis.call('SET', key, packed, 'PX', ms)
    -- what took the last token: the retry-after a request of cost 1 would get right after this one
    local exhausted = 0
    if left + t < 1 then
      exhausted = math.ceil((1 - left) * WINDOW / LIMIT) + ahead
    end
    return 1, math.floor(left + t), za, exhausted
  end
  local zb = math.ceil((BURST - tokens) * WINDOW / LIMIT)
  if zb > 0 then zb = zb + ahead end
  return 0, math.floor(tokens + t), zb, math.ceil((cost - tokens) * WINDOW / LIMIT) + ahead
end
