-- Token bucket. State: one struct-packed string (its layout: architecture, "The token bucket's state"): the tokens
-- and their time, then once a refund or a lease wrote them the refund mark q and the leases' records (lease.lua). A
-- commit rewrites the tokens and their time and keeps the rest. limit tokens per window refill a bucket of burst
-- tokens; the key expires once the bucket would be full again, at most ttl_slack_ms later (the TTL is set again only
-- when PTTL shows it no longer covers that: architecture, "TTLs"), or later while leases' records are kept.
-- A changed policy or a clock gone back: architecture, "State that outlives a policy change".
local function tb_fill_time(c, tokens)
  return math.ceil((c.burst - tokens) * c.window / c.limit)
end

ALG.tb = {
  check = function(c)
    c.value = redis.call('GET', c.key)
    local tokens = c.burst
    c.at = c.now
    if c.value then
      local s
      tokens, s = struct.unpack('<dd', c.value)
      tokens = math.min(c.burst, tokens)
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
    local packed = struct.pack('<dd', c.left, c.at)
    if c.value and #c.value > 16 then packed = packed .. string.sub(c.value, 17) end
    if c.value and keeps_ttl(c.key, c.za) then
      redis.call('SET', c.key, packed, 'KEEPTTL')
      return
    end
    local ms = EXPLICIT_TIME and ttl_ms(c.za) or ttl_ms(c.za) + ttl_slack_ms(c)
    -- leases' records: keep lease.lua's TTL (their lapse, then a refill) when it is the longer
    if #packed > 24 then ms = math.max(ms, redis.call('PTTL', c.key)) end
    redis.call('SET', c.key, packed, 'PX', ms)
  end,
  -- The cost goes back whole while the bucket was last written at the acquire's time (c.now), else nothing; q keeps
  -- the acquire time refunded last, so a refund is made once (architecture, "Refunds").
  refund = function(c)
    local value = redis.call('GET', c.key)
    if not value then
      return
    end
    local tokens, s = struct.unpack('<dd', value)
    local q = (#value >= 24) and struct.unpack('<d', value, 17) or -1
    if s == c.now and q ~= c.now then
      redis.call('SET', c.key, struct.pack('<ddd', math.min(c.burst, tokens + c.cost), s, c.now)
        .. string.sub(value, 25), 'KEEPTTL')
    end
  end
}
