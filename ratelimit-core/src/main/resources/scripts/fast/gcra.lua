-- Single-entry acquire of GCRA, written straight through: the same arithmetic and the same state as gcra.lua's check
-- and commit (keep the two in step; see fast/token-bucket.lua for why). It defines decide(key, cost, now) as
-- single.lua does.
local function decide(key, cost, now)
  local interval = WINDOW / LIMIT
  local tolerance = interval * BURST
  local t = 1e-12 * math.max(1, BURST)
  local backlog = 0
  local value = redis.call('GET', key)
  if value then
    local a = string.find(value, ':', 1, true)
    local b = string.find(value, ':', a + 1, true)
    local s, d, i
    if b then
      local e = string.find(value, ':', b + 1, true)
      s, d, i = tonumber(string.sub(value, 1, a - 1)), tonumber(string.sub(value, a + 1, b - 1)),
        tonumber(string.sub(value, b + 1, e - 1))
      if i ~= interval then
        d = d / i * interval
      end
    else
      s, d = tonumber(string.sub(value, 1, a - 1)), tonumber(string.sub(value, a + 1))
    end
    if d > tolerance + interval * t then
      d = tolerance
    end
    backlog = math.max(0, d - (now - s))
  end
  local new_backlog = backlog + interval * cost
  local left = (tolerance - new_backlog) / interval
  if left + t >= 0 then
    local za = math.ceil(new_backlog)
    local ms = math.ceil(za / 1000)
    if ms < 1 then ms = 1 end
    if EXPLICIT_TIME and ms < 600000 then ms = 600000 end
    redis.call('SET', key, string.format('%.17g', now) .. ':' .. string.format('%.17g', new_backlog) .. ':'
      .. string.format('%.17g', interval) .. ':', 'PX', ms)
    -- what took the last cell: the retry-after a request of cost 1 would get right after this one
    local exhausted = 0
    if left + t < 1 then
      exhausted = math.ceil(new_backlog + interval - tolerance)
    end
    return 1, math.floor(left + t), za, exhausted
  end
  return 0, math.max(0, math.floor((tolerance - backlog) / interval + t)), math.ceil(backlog),
    math.ceil(new_backlog - tolerance)
end
