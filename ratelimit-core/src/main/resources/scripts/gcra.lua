-- GCRA (generic cell rate algorithm, the leaky bucket as a meter). State: one value, the theoretical arrival
-- time (TAT). Emission interval T = window / limit; a request of cost n is admitted when, after adding n * T,
-- the TAT is at most burst * T ahead of now. The same limits as the token bucket in a single value.
ALG.gc = {
  check = function(c)
    local interval = c.window / c.limit
    local tolerance = interval * c.burst
    local tat = tonumber(redis.call('GET', c.key))
    if tat == nil or tat < c.now then
      tat = c.now
    end
    c.rb = math.floor((tolerance - (tat - c.now)) / interval + EPS)
    c.zb = math.ceil(tat - c.now)
    local new_tat = tat + interval * c.cost
    local left = (tolerance - (new_tat - c.now)) / interval
    if left + EPS >= 0 then
      c.ok = true
      c.tat = new_tat
      c.ra = math.floor(left + EPS)
      c.za = math.ceil(new_tat - c.now)
    else
      c.ok = false
      c.retry = math.ceil(new_tat - tolerance - c.now)
    end
  end,
  commit = function(c)
    redis.call('SET', c.key, num(c.tat), 'PX', ceil_ms(c.za))
  end,
  refund = function(c)
    local tat = tonumber(redis.call('GET', c.key))
    if tat ~= nil then
      redis.call('SET', c.key, num(tat - (c.window / c.limit) * c.cost), 'KEEPTTL')
    end
  end
}
