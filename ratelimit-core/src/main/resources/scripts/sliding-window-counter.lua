-- Sliding window counter. State: hash {w = current window number, c = its count, p = previous window's count}.
-- The estimate is p * (share of the previous window still inside the sliding window) + c. Exact for evenly
-- spread traffic; at most limit per aligned window, so never more than 2 * limit in any sliding window.
local function sc_reset(c, current_count, previous_count)
  if current_count > 0 then
    return (c.current + 2) * c.window - c.now
  elseif previous_count > 0 then
    return (c.current + 1) * c.window - c.now
  end
  return 0
end

ALG.sc = {
  check = function(c)
    local current = math.floor(c.now / c.window)
    c.current = current
    local st = redis.call('HMGET', c.key, 'w', 'c', 'p')
    local count, previous = 0, 0
    if st[1] then
      local w = tonumber(st[1])
      if w == current then
        count = tonumber(st[2])
        previous = tonumber(st[3])
      elseif w == current - 1 then
        previous = tonumber(st[2])
      end
    end
    c.count = count
    c.previous = previous
    local elapsed = c.now - current * c.window
    local estimate = previous * ((c.window - elapsed) / c.window) + count
    c.rb = math.max(0, math.floor(c.limit - estimate + EPS))
    c.zb = sc_reset(c, count, previous)
    if estimate + c.cost <= c.limit + EPS then
      c.ok = true
      c.ra = math.max(0, math.floor(c.limit - estimate - c.cost + EPS))
      c.za = sc_reset(c, count + c.cost, previous)
    else
      c.ok = false
      local room = c.limit - count - c.cost
      if room >= 0 and previous > 0 then
        -- wait inside the current window until the previous window's weight has shrunk enough
        c.retry = math.ceil(current * c.window + c.window * (1 - room / previous) - c.now)
      else
        -- wait for the next window, where this window's count becomes the weighted one
        local next_room = c.limit - c.cost
        local wait = (current + 1) * c.window - c.now
        if count > next_room then
          wait = wait + c.window * (1 - next_room / count)
        end
        c.retry = math.ceil(wait)
      end
    end
  end,
  commit = function(c)
    redis.call('HSET', c.key, 'w', num(c.current), 'c', num(c.count + c.cost), 'p', num(c.previous))
    redis.call('PEXPIRE', c.key, ceil_ms((c.current + 2) * c.window - c.now))
  end,
  refund = function(c)
    local count = tonumber(redis.call('HGET', c.key, 'c'))
    if count ~= nil then
      redis.call('HSET', c.key, 'c', num(math.max(0, count - c.cost)))
    end
  end
}
