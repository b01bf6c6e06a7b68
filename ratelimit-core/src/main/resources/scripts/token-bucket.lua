-- Token bucket. State: one struct-packed string (its layout: architecture, "The token bucket's state"): the tokens,
-- their time and the expiry (ms) the key has at least, then once a refund or a lease wrote them the refund mark q and
-- the leases' records (lease.lua). A commit rewrites the head and keeps the rest. limit tokens per window refill a
-- bucket of burst tokens; the key expires once the bucket would be full again, at most tb_slack_ms later (its TTL is
-- set again only when the expiry it has no longer covers that: architecture, "TTLs"), or later while leases'
-- records are kept.
-- A changed policy or a clock gone back: architecture, "State that outlives a policy change".
local function tb_fill_time(c, tokens)
  return math.ceil((c.burst - tokens) * c.window / c.limit)
end

-- How much longer than its fill time a key may live when its TTL is set: a second, at most a full refill.
local function tb_slack_ms(c)
  return math.min(1000, math.ceil(c.burst * c.window / c.limit / 1000))
end

ALG.tb = {
  check = function(c)
    c.value = redis.call('GET', c.key)
    local tokens = c.burst
    c.at = c.now
    c.expiry = 0
    if c.value then
      local s
      tokens, s, c.expiry = struct.unpack('<ddd', c.value)
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
    local ms = math.max(1, math.ceil(c.za / 1000))
    local tail = c.value and string.sub(c.value, 25) or ''
    local now_ms = math.floor(c.now / 1000)
    if c.expiry - now_ms >= ms and not EXPLICIT_TIME then
      redis.call('SET', c.key, struct.pack('<ddd', c.left, c.at, c.expiry) .. tail, 'KEEPTTL')
      return
    end
    ms = EXPLICIT_TIME and ttl_ms(c.za) or ms + tb_slack_ms(c)
    -- leases' records: keep lease.lua's TTL (their lapse, then a refill) when it is the longer
    if #tail > 8 then ms = math.max(ms, redis.call('PTTL', c.key)) end
    redis.call('SET', c.key, struct.pack('<ddd', c.left, c.at, EXPLICIT_TIME and 0 or now_ms + ms) .. tail, 'PX', ms)
  end,
  -- The cost goes back whole while the bucket was last written at the acquire's time (c.now), else nothing; q keeps
  -- the acquire time refunded last, so a refund is made once (architecture, "Refunds").
  refund = function(c)
    local value = redis.call('GET', c.key)
    if not value then
      return
    end
    local tokens, s, expiry = struct.unpack('<ddd', value)
    local q = (#value >= 32) and struct.unpack('<d', value, 25) or -1
    if s == c.now and q ~= c.now then
      redis.call('SET', c.key, struct.pack('<dddd', math.min(c.burst, tokens + c.cost), s, expiry, c.now)
        .. string.sub(value, 33), 'KEEPTTL')
    end
  end
}
