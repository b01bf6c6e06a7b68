-- Fixed window. State: hash {w = window number, l = window length, c = count, u = refunds made}. Windows are
-- aligned on multiples of the window since the epoch, so up to 2 * limit pass across one boundary. A changed window
-- or a clock gone back: architecture, "State that outlives a policy change".
ALG.fw = {
  check = function(c)
    local k = math.floor(c.now / c.window)
    local st = redis.call('HMGET', c.key, 'w', 'c', 'l')
    local current, length, count = k, c.window, 0
    c.held = false
    if st[1] then
      local w, n, l = tonumber(st[1]), tonumber(st[2]), tonumber(st[3]) or c.window
      local from, to = w * l, (w + 1) * l
      if from >= (k + 1) * c.window then
        current, length, count = w, l, n
        c.held = true
      elseif to > k * c.window then
        count = n
        c.held = true
        if l ~= c.window then
          -- rewritten as the current window, its TTL with it
          redis.call('HSET', c.key, 'w', num(k), 'l', num(c.window))
          window_ttl(c.key, (k + 1) * c.window - c.now)
        end
      end
    end
    local window_end = (current + 1) * length - c.now
    c.current = current
    c.length = length
    c.count = count
    c.rb = math.max(0, c.limit - count)
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
    if c.held and keeps_ttl(c.key, c.za) then
      redis.call('HSET', c.key, 'c', num(c.count + c.cost))
      return
    end
    redis.call('HSET', c.key, 'w', num(c.current), 'l', num(c.length), 'c', num(c.count + c.cost))
    window_ttl(c.key, c.za)
  end,
  -- After commit: the retry-after a request of cost 1 gets right after this admission (the end of the window it
  -- counted in), or 0 when it would be admitted.
  exhausted = function(c)
    if c.count + c.cost + 1 <= c.limit then
      return 0
    end
    return c.za
  end,
  -- Only the window the request was counted in gets the cost back, once.
  refund = function(c)
    local st = redis.call('HMGET', c.key, 'w', 'c', 'l')
    if st[1] and tonumber(st[1]) == math.floor(c.now / c.window)
        and (tonumber(st[3]) or c.window) == c.window and not refunded_before(c.key, c.rid) then
      redis.call('HSET', c.key, 'c', num(math.max(0, tonumber(st[2]) - c.cost)))
    end
  end
}
