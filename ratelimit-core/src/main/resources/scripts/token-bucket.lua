-- Token bucket. State: hash {t = tokens, s = time of t, q = the time of the acquire last refunded, once one was}.
-- limit tokens per window refill a bucket of burst tokens; the key expires when the bucket would be full again. A
-- changed policy or a clock gone back: architecture, "State that outlives a policy change".
local function tb_fill_time(c, tokens)
  return math.ceil((c.burst - tokens) * c.window / c.limit)
end

ALG.tb = {
  check = function(c)
    local st = redis.call('HMGET', c.key, 't', 's')
    local tokens = c.burst
    c.at = c.now
    if st[1] then
      tokens = math.min(c.burst, tonumber(st[1]))
      local s = tonumber(st[2])
      local elapsed = c.now - s
      if elapsed > 0 then
        tokens = math.min(c.burst, tokens + elapsed * c.limit / c.window)
      else
        c.at = s
      end
    end
    local ahead = c.at - c.now
    local t = tol(c.burst)
    c.rb = math.floor(tokens + t)
    c.zb = tb_fill_time(c, tokens)
    if c.zb > 0 then c.zb = c.zb + ahead end
    if tokens + t >= c.cost then
      c.ok = true
      c.left = math.max(0, tokens - c.cost)
      c.ra = math.floor(c.left + t)
      c.za = tb_fill_time(c, c.left) + ahead
    else
      c.ok = false
      c.retry = math.ceil((c.cost - tokens) * c.window / c.limit) + ahead
    end
  end,
  commit = function(c)
    redis.call('HSET', c.key, 't', num(c.left), 's', num(c.at))
    pexpire(c.key, c.za)
  end,
  -- The cost goes back whole while the bucket was last written at the acquire's time (c.now), else nothing; q keeps
  -- the acquire time refunded last, so a refund is made once (architecture, "Refunds").
  refund = function(c)
    local st = redis.call('HMGET', c.key, 't', 's', 'q')
    if st[1] and tonumber(st[2]) == c.now and tonumber(st[3]) ~= c.now then
      redis.call('HSET', c.key, 't', num(math.min(c.burst, tonumber(st[1]) + c.cost)), 'q', num(c.now))
    end
  end
}
