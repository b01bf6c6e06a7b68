-- Single-entry acquire of the token bucket, written straight through: the same arithmetic and state as
-- token-bucket.lua's check and commit (keep the two in step), without the driver's tables and closures, which cost
-- Redis about a third of the call. It defines decide(key, cost, now) as single.lua does.
local function decide(key, cost, now)
  local st = redis.call('HMGET', key, 't', 's')
  local tokens = BURST
  local at = now
  if st[1] then
    tokens = math.min(BURST, tonumber(st[1]))
    local s = tonumber(st[2])
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
    redis.call('HSET', key, 't', string.format('%.17g', left), 's', string.format('%.17g', at))
    local ms = math.ceil(za / 1000)
    if ms < 1 then ms = 1 end
    if EXPLICIT_TIME and ms < 600000 then ms = 600000 end
    redis.call('PEXPIRE', key, string.format('%d', ms))
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
