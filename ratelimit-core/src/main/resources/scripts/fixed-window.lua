-- Fixed window. State: hash {w = window number, c = count}. Windows are aligned on multiples of window since
-- the epoch; the count starts again at every boundary, so up to 2 * limit pass across one boundary.
ALG.fw = {
  check = function(c)
    local current = math.floor(c.now / c.window)
    local st = redis.call('HMGET', c.key, 'w', 'c')
    local count = 0
    if st[1] and tonumber(st[1]) == current then
      count = tonumber(st[2])
    end
    local window_end = (current + 1) * c.window - c.now
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
    redis.call('PEXPIRE', c.key, ceil_ms(c.za))
  end,
  refund = function(c)
    local count = tonumber(redis.call('HGET', c.key, 'c'))
    if count ~= nil then
      redis.call('HSET', c.key, 'c', num(math.max(0, count - c.cost)))
    end
  end
}
