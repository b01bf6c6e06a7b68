-- GCRA (generic cell rate algorithm). Emission interval T = window / limit; a request of cost n is admitted when,
-- after adding n * T, the theoretical arrival time (TAT) is at most burst * T ahead of now. State: one string
-- "s:d:i:q": the time written, the backlog d = TAT - s (the TAT itself, about 1.7e15 us, would round every fraction),
-- the interval i it was measured in, and q: empty, or 'r' once a request of time s was refunded. A changed policy
-- or a clock gone back: architecture, "State that outlives a policy change".
local function gc_read(c)
  local value = redis.call('GET', c.key)
  if not value then
    return nil
  end
  local a = string.find(value, ':', 1, true)
  local b = string.find(value, ':', a + 1, true)
  if not b then
    -- written before the interval and the request were kept
    return tonumber(string.sub(value, 1, a - 1)), tonumber(string.sub(value, a + 1)), nil, ''
  end
  local d = string.find(value, ':', b + 1, true)
  return tonumber(string.sub(value, 1, a - 1)), tonumber(string.sub(value, a + 1, b - 1)),
    tonumber(string.sub(value, b + 1, d - 1)), string.sub(value, d + 1)
end

-- The value with its TTL in milliseconds (one SET ... PX), or the TTL kept when ms is nil.
local function gc_write(key, s, d, i, q, ms)
  local value = num(s) .. ':' .. num(d) .. ':' .. num(i) .. ':' .. q
  if ms then
    redis.call('SET', key, value, 'PX', ms)
  else
    redis.call('SET', key, value, 'KEEPTTL')
  end
end

-- The TTL a commit sets, nil to keep the key's: kept while PTTL covers the backlog (keeps_ttl), else the backlog and
-- ttl_slack_ms (burst * interval is the tolerance), so that a busy key sets it about once a second (architecture,
-- "TTLs").
local function gc_ttl(c)
  if c.exists and keeps_ttl(c.key, c.za) then
    return nil
  end
  if EXPLICIT_TIME then
    return ttl_ms(c.za)
  end
  return ttl_ms(c.za) + ttl_slack_ms(c)
end

ALG.gc = {
  check = function(c)
    local interval = c.window / c.limit
    local tolerance = interval * c.burst
    local t = tol(c.burst)
    local s, d, i = gc_read(c)
    c.exists = s ~= nil
    local backlog = 0
    if s ~= nil then
      if i ~= nil and i ~= interval then
        d = d / i * interval
      end
      -- beyond a full tolerance only after a smaller burst (an admission overshoots it by the rounding t at most)
      if d > tolerance + interval * t then
        d = tolerance
      end
      backlog = math.max(0, d - (c.now - s))
    end
    c.rb = math.max(0, math.floor((tolerance - backlog) / interval + t))
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
    gc_write(c.key, c.now, c.backlog, c.window / c.limit, '', gc_ttl(c))
  end,
  -- Exact while the backlog was last written at the time of this request's acquire (see the token bucket); otherwise
  -- nothing. q = 'r' marks the time s as refunded, so that a refund is made once.
  refund = function(c)
    local s, d, i, q = gc_read(c)
    if s ~= nil and i ~= nil and s == c.now and q ~= 'r' then
      gc_write(c.key, s, d - i * c.cost, i, 'r', nil)
    end
  end
}
