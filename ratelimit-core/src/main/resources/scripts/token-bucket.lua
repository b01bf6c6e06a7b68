-- Token bucket. State: hash {t = tokens, s = time of t, q = the time of the acquire last refunded, once one was}.
-- limit tokens per window refill a bucket of burst tokens. The key expires when the bucket would be full again,
-- which is the same as no key.
-- A changed policy reads the same state: the tokens left, at most a full bucket of the new burst, refilled at the
-- new rate. A clock that went back (a failover to a server whose clock is behind) finds s in the future: nothing
-- refills before s, every wait counts from s, and the later time is kept.
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
  -- Exact while the bucket was last written at the time of this request's acquire (c.now): no refill has happened
  -- since it took its cost, so the cost goes back whole, whether this request or another of the same microsecond
  -- took last. Once the bucket was written at a later time, the arithmetic no longer tells how much of the cost the
  -- request still holds (a refill capped at burst may have absorbed it), so nothing goes back. The acquire stores
  -- nothing to name its request: q keeps the acquire time refunded last, so a refund is made once (a second one of
  -- the same microsecond finds q and gives nothing back, which errs on the side of the limit).
  refund = function(c)
    local st = redis.call('HMGET', c.key, 't', 's', 'q')
    if st[1] and tonumber(st[2]) == c.now and tonumber(st[3]) ~= c.now then
      redis.call('HSET', c.key, 't', num(math.min(c.burst, tonumber(st[1]) + c.cost)), 'q', num(c.now))
    end
  end
}
