-- GCRA (generic cell rate algorithm, the leaky bucket as a meter). Emission interval T = window / limit; a
-- request of cost n is admitted when, after adding n * T, the theoretical arrival time (TAT) is at most burst * T
-- ahead of now. The same limits as the token bucket. State: one string "s:d", the time it was written and the
-- backlog d = TAT - s; storing the TAT itself (about 1.7e15 us) would round every fractional interval.
local function gc_read(c)
  local value = redis.call('GET', c.key)
  if not value then
    return nil, nil
  end
  local sep = string.find(value, ':', 1, true)
  return tonumber(string.sub(value, 1, sep - 1)), tonumber(string.sub(value, sep + 1))
end

ALG.gc = {
  check = function(c)
    local interval = c.window / c.limit
    local tolerance = interval * c.burst
    local s, d = gc_read(c)
    local backlog = 0
    if s ~= nil then
      backlog = math.max(0, d - (c.now - s))
    end
    local t = tol(c.burst)
    c.rb = math.floor((tolerance - backlog) / interval + t)
    c.zb = math.ceil(backlog)
    local new_backlog = backlog + interval * c.cost
    local left = (tolerance - new_backlog) / interval
    if left + t >= 0 then
      c.ok = true
      c.backlog = new_backlog
      c.ra = math.floor(left + t)
      c.za = math.ceil(new_backlog)
    else
      c.ok = false
      c.retry = math.ceil(new_backlog - tolerance)
    end
  end,
  commit = function(c)
    redis.call('SET', c.key, num(c.now) .. ':' .. num(c.backlog))
    pexpire(c.key, c.za)
  end,
  refund = function(c)
    local s, d = gc_read(c)
    if s ~= nil then
      redis.call('SET', c.key, num(s) .. ':' .. num(d - (c.window / c.limit) * c.cost), 'KEEPTTL')
    end
  end
}
