-- Token bucket. State: hash {t = tokens, s = time of t}. limit tokens per window refill a bucket of burst tokens.
-- The key expires when the bucket would be full again, which is the same as no key.
local function tb_fill_time(c, tokens)
  return math.ceil((c.burst - tokens) * c.window / c.limit)
end

ALG.tb = {
  check = function(c)
    local st = redis.call('HMGET', c.key, 't', 's')
    local tokens = c.burst
    if st[1] then
      tokens = tonumber(st[1])
      local elapsed = c.now - tonumber(st[2])
      if elapsed > 0 then
        tokens = math.min(c.burst, tokens + elapsed * c.limit / c.window)
      end
    end
    local t = tol(c.burst)
    c.rb = math.floor(tokens + t)
    c.zb = tb_fill_time(c, tokens)
    if tokens + t >= c.cost then
      c.ok = true
      c.left = math.max(0, tokens - c.cost)
      c.ra = math.floor(c.left + t)
      c.za = tb_fill_time(c, c.left)
    else
      c.ok = false
      c.retry = math.ceil((c.cost - tokens) * c.window / c.limit)
    end
  end,
  commit = function(c)
    redis.call('HSET', c.key, 't', num(c.left), 's', num(c.now))
    pexpire(c.key, c.za)
  end,
  refund = function(c)
    local tokens = redis.call('HGET', c.key, 't')
    if tokens then
      redis.call('HSET', c.key, 't', num(math.min(c.burst, tonumber(tokens) + c.cost)))
    end
  end
}
