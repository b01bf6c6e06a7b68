-- Fixed window. State: hash {w = window number, c = count}. Windows are aligned on multiples of window since
-- the epoch; the count starts again at every boundary, so up to 2 * limit pass across one boundary.
ALG.fw = {
  check = function(c)
    local current = math.floor(c.now / c.window)
    local st = redis.call('HMGET', c.key, 'w', 'c')
    local count = 0
    -- a stored window after the current one means the clock went back (failover): keep counting it
    if st[1] and tonumber(st[1]) >= current then
      count = tonumber(st[2])
      current = tonumber(st[1])
    end
    local window_end = c.window - (c.now - math.floor(c.now / c.window) * c.window)
    c.current = current
    c.count = count
    c.rb = c.limit - count
    c.zb = 0
    if count > 0 then c.zb = window_end end
    c.za = window_end
    if count + c.cost <= c.limit then
      c.ok = true
      c.ra = c.limit - count - c.cost
    else
      c.ok = false
      c.retry = window_end
    end
  end,
  commit = function(c)
    redis.call('HSET', c.key, 'w', num(c.current), 'c', num(c.count + c.cost))
    pexpire(c.key, c.za)
  end,
  refund = function(c)
    -- only the window the request was counted in gets the cost back
    local st = redis.call('HMGET', c.key, 'w', 'c')
    if st[1] and tonumber(st[1]) == math.floor(c.now / c.window) then
      redis.call('HSET', c.key, 'c', num(math.max(0, tonumber(st[2]) - c.cost)))
    end
  end
}
