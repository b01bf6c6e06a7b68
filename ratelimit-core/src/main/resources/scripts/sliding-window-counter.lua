-- Sliding window counter. State: hash {w = current window number, c = its count, p = previous window's count}.
-- The estimate is p * (share of the previous window still inside the sliding window) + c. Exact for evenly
-- spread traffic; at most limit per aligned window, so never more than 2 * limit in any sliding window.
-- Durations are computed from elapsed = now - window start, an exact small integer, and waits as
-- window * (a - b) / a, exact whenever the true wait is a whole number of microseconds.
local function sc_reset(c, current_count, previous_count)
  if current_count > 0 then
    return 2 * c.window - c.elapsed
  elseif previous_count > 0 then
    return c.window - c.elapsed
  end
  return 0
end

ALG.sc = {
  check = function(c)
    local current = math.floor(c.now / c.window)
    c.elapsed = c.now - current * c.window
    local st = redis.call('HMGET', c.key, 'w', 'c', 'p')
    local count, previous = 0, 0
    if st[1] then
      local w = tonumber(st[1])
      if w >= current then
        -- the current window (or, if the clock went back, a later one: keep counting it)
        count = tonumber(st[2])
        previous = tonumber(st[3])
        current = w
      elseif w == current - 1 then
        previous = tonumber(st[2])
      end
    end
    c.current = current
    c.count = count
    c.previous = previous
    local estimate = previous * ((c.window - c.elapsed) / c.window) + count
    local t = tol(c.limit)
    c.rb = math.max(0, math.floor(c.limit - estimate + t))
    c.zb = sc_reset(c, count, previous)
    if estimate + c.cost <= c.limit + t then
      c.ok = true
      c.ra = math.max(0, math.floor(c.limit - estimate - c.cost + t))
      c.za = sc_reset(c, count + c.cost, previous)
    else
      c.ok = false
      local room = c.limit - count - c.cost
      if room >= 0 and previous > 0 then
        -- wait inside the current window until the previous window's weight has shrunk enough
        c.retry = math.ceil(c.window * (previous - room) / previous) - c.elapsed
      else
        -- wait for the next window, where this window's count becomes the weighted one
        local next_room = c.limit - c.cost
        c.retry = c.window - c.elapsed
        if count > next_room then
          c.retry = c.retry + math.ceil(c.window * (count - next_room) / count)
        end
      end
    end
  end,
  commit = function(c)
    redis.call('HSET', c.key, 'w', num(c.current), 'c', num(c.count + c.cost), 'p', num(c.previous))
    pexpire(c.key, 2 * c.window - c.elapsed)
  end,
  refund = function(c)
    -- the cost goes back to the window it was counted in: the current count, or the previous count once the
    -- window has moved on
    local st = redis.call('HMGET', c.key, 'w', 'c', 'p')
    if st[1] then
      local counted_in = math.floor(c.now / c.window)
      local w = tonumber(st[1])
      if w == counted_in then
        redis.call('HSET', c.key, 'c', num(math.max(0, tonumber(st[2]) - c.cost)))
      elseif w == counted_in + 1 then
        redis.call('HSET', c.key, 'p', num(math.max(0, tonumber(st[3]) - c.cost)))
      end
    end
  end
}
