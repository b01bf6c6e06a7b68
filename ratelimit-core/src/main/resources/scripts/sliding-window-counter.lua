-- Sliding window counter. State: hash {w = current window number, l = window length, c = its count, p = previous
-- window's count, u = refunds made}. The estimate is p * (share of the previous window still inside the sliding
-- window) + c: exact for evenly spread traffic, never more than 2 * limit in any sliding window. Durations come from
-- elapsed = now - window start, an exact small integer, and waits as window * (a - b) / a, exact whenever the true
-- wait is a whole number of microseconds. A changed window or a clock gone back: architecture, "State that outlives
-- a policy change".
local function sc_reset(c, current_count, previous_count)
  if current_count > 0 then
    return 2 * c.window - c.elapsed
  elseif previous_count > 0 then
    return c.window - c.elapsed
  end
  return 0
end

-- The wait of a request of that cost denied under these counts, at c.elapsed into the window (c.ahead added).
local function sc_retry(c, count, previous, cost)
  local retry
  local room = c.limit - count - cost
  if room >= 0 and previous > 0 then
    -- wait inside the current window until the previous window's weight has shrunk enough
    retry = math.ceil(c.window * (previous - room) / previous) - c.elapsed
  else
    -- wait for the next window, where this window's count becomes the weighted one
    local next_room = c.limit - cost
    retry = c.window - c.elapsed
    if count > next_room then
      retry = retry + math.ceil(c.window * (count - next_room) / count)
    end
  end
  return retry + c.ahead
end

ALG.sc = {
  check = function(c)
    local current = math.floor(c.now / c.window)
    c.elapsed = c.now - current * c.window
    local ahead = 0
    local st = redis.call('HMGET', c.key, 'w', 'c', 'p', 'l')
    local count, previous = 0, 0
    c.held = false
    if st[1] then
      local w, l = tonumber(st[1]), tonumber(st[4]) or c.window
      if l ~= c.window then
        if (w + 1) * l > c.now - c.window then count = count + tonumber(st[2]) end
        if w * l > c.now - c.window then count = count + tonumber(st[3]) end
        if count > 0 then
          -- rewritten as the current window, its TTL with it
          redis.call('HSET', c.key, 'w', num(current), 'l', num(c.window), 'c', num(count), 'p', '0')
          window_ttl(c.key, 2 * c.window - c.elapsed)
          c.held = true
        end
      elseif w > current then
        count = tonumber(st[2])
        previous = tonumber(st[3])
        ahead = w * c.window - c.now
        current = w
        c.elapsed = 0
        c.held = true
      elseif w == current then
        count = tonumber(st[2])
        previous = tonumber(st[3])
        c.held = true
      elseif w == current - 1 then
        previous = tonumber(st[2])
      end
    end
    c.current = current
    c.count = count
    c.previous = previous
    c.ahead = ahead
    local estimate = previous * ((c.window - c.elapsed) / c.window) + count
    local t = tol(c.limit)
    c.rb = math.max(0, math.floor(c.limit - estimate + t))
    c.zb = sc_reset(c, count, previous)
    if c.zb > 0 then c.zb = c.zb + ahead end
    if estimate + c.cost <= c.limit + t then
      c.ok = true
      c.ra = math.max(0, math.floor(c.limit - estimate - c.cost + t))
      c.za = sc_reset(c, count + c.cost, previous) + ahead
    else
      c.ok = false
      c.retry = sc_retry(c, count, previous, c.cost)
    end
  end,
  commit = function(c)
    if c.held and keeps_ttl(c.key, 2 * c.window - c.elapsed + c.ahead) then
      redis.call('HSET', c.key, 'c', num(c.count + c.cost))
      return
    end
    redis.call('HSET', c.key, 'w', num(c.current), 'l', num(c.window), 'c', num(c.count + c.cost),
      'p', num(c.previous))
    window_ttl(c.key, 2 * c.window - c.elapsed + c.ahead)
  end,
  -- After commit: the retry-after a request of cost 1 gets right after this admission (check's figures on the state
  -- commit wrote: a changed window was rewritten as this one's, a later window is still read at its start), or 0
  -- when it would be admitted.
  exhausted = function(c)
    local count = c.count + c.cost
    if c.previous * ((c.window - c.elapsed) / c.window) + count + 1 <= c.limit + tol(c.limit) then
      return 0
    end
    return sc_retry(c, count, c.previous, 1)
  end,
  -- The cost goes back once to the window it was counted in: the current count, or the previous count once the
  -- window has moved on.
  refund = function(c)
    local st = redis.call('HMGET', c.key, 'w', 'c', 'p', 'l')
    if st[1] and (tonumber(st[4]) or c.window) == c.window then
      local counted_in = math.floor(c.now / c.window)
      local w = tonumber(st[1])
      if w == counted_in then
        if not refunded_before(c.key, c.rid) then
          redis.call('HSET', c.key, 'c', num(math.max(0, tonumber(st[2]) - c.cost)))
        end
      elseif w == counted_in + 1 then
        if not refunded_before(c.key, c.rid) then
          redis.call('HSET', c.key, 'p', num(math.max(0, tonumber(st[3]) - c.cost)))
        end
      end
    end
  end
}
