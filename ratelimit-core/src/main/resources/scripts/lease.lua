-- Leased quotas (architecture, "Leased quotas"): an instance takes a slice of a key's quota in one call, spends it
-- locally, and gives back what it did not spend. Token bucket and fixed window only, on the keys and state of their
-- exact scripts, so exact and leased requests of one key count together.
-- KEYS[1] the key. ARGV: 1 mode ('t' take, 'g' give back), 2 algorithm code ('tb' or 'fw'), 3 limit, 4 window (us),
-- 5 burst, 6 the instance's id, 7 what the instance still holds of its slice, 8 the start (us) of the window its
-- slice was taken in (fixed window; -1 for none), 9 how much to take, 10 the least a take may grant (the cost of the
-- request waiting for it; less than that and it grants nothing), 11 the lapse bound (us), 12 the call's number (takes
-- and give-backs numbered from one counter per instance). A call whose number is not above the one on the instance's
-- record (a replay after a reconnect, a re-send, a call overtaken by a later one) writes nothing; an exact replay of
-- the take that wrote the record answers that record each time.
-- Returns: the time used, granted, kept (of what the instance held, what stays its own), remaining in Redis,
-- reset-after, retry-after (when nothing was granted), lapse-after (how long the slice may be spent, -1 when a take
-- granted nothing and the slice kept its lapse), and the start of the slice's window (fixed window; 0 otherwise).
-- The Java side of this layout: LeaseCall in core.redis.
local key = KEYS[1]
local mode, code = ARGV[1], ARGV[2]
local LIMIT, WINDOW, BURST = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local me, held, held_window = 'i:' .. ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])
local want, need, bound, seq = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local function num(x)
  return string.format('%.17g', x)
end

-- A TTL of us microseconds in whole milliseconds (an integer, which Redis reads exactly from a Lua number).
local function ttl_ms(us)
  local ms = math.ceil(us / 1000)
  if ms < 1 then ms = 1 end
  return ms
end

local function pexpire(us)
  redis.call('PEXPIRE', key, ttl_ms(us))
end

-- A fixed window's record of an instance, as text in its field: "<amount> <lapse time> <number>" (slices of the
-- window whose end or lapse bound its lapse time is). The token bucket's records are packed (token_bucket below).
local function parse(v)
  if not v then return nil end
  local amount, lapse, n = string.match(v, '^(%S+) (%S+) (%S+)$')
  return { a = tonumber(amount), l = tonumber(lapse), n = tonumber(n) }
end

-- A call not newer than the record: nothing written. An exact replay of a live record's take answers the record (what
-- the instance holds of it kept, the rest granted, its lapse); any other answers nothing granted.
local function stale(mine, remaining, reset, start)
  local kept, granted, lapse_after = 0, 0, -1
  if mode == 't' and seq == mine.n and mine.l > now then
    kept = math.min(held, mine.a)
    granted, lapse_after = mine.a - kept, mine.l - now
  end
  return { now, granted, kept, remaining, reset, (granted > 0) and 0 or 1, lapse_after, start }
end

-- Token bucket with slices on record, in the bucket's string (its layout: architecture, "The token bucket's state"):
-- tokens and their time, the refund mark q, then one record per instance. The bucket never refills above the burst
-- minus what is on record, so what instances spend at their own times always fits the bucket; a record that lapsed
-- counts as spent from its lapse on (the bucket is refilled up to each lapse under the cap before it).
local function token_bucket()
  local id = ARGV[6]
  if #id > 255 then
    -- a record holds its id's length in one byte
    return redis.error_reply('lease.lua: an instance id of more than 255 bytes (' .. #id .. ')')
  end
  local value = redis.call('GET', key)
  local tokens, s, q = BURST, now, -1
  local records, outstanding, own = {}, 0, nil
  if value then
    tokens, s = struct.unpack('<dd', value)
    tokens = math.min(BURST, tokens)
    if #value >= 24 then q = struct.unpack('<d', value, 17) end
    local pos = 25
    while pos <= #value do
      local r = {}
      r.a, r.l, r.n, r.id, pos = struct.unpack('<dddBc0', value, pos)
      records[#records + 1] = r
      outstanding = outstanding + r.a
      if r.id == id then own = r end
    end
  end
  local rate = LIMIT / WINDOW
  local tol = 1e-12 * math.max(1, BURST)
  table.sort(records, function(x, y) return x.l < y.l end)
  local mine, last_lapse, live = nil, now, {}
  for _, r in ipairs(records) do
    if r.l <= now then
      if r.l > s then
        tokens = math.min(BURST - outstanding, tokens + (r.l - s) * rate)
        s = r.l
      end
      outstanding = outstanding - r.a
    else
      if r.id == id then mine = r else live[#live + 1] = r end
      if r.l > last_lapse then last_lapse = r.l end
    end
  end
  if now > s then
    tokens = math.min(BURST - outstanding, tokens + (now - s) * rate)
    s = now
  end
  -- a state counted at a later time (a clock gone back): nothing refills before it, waits and the TTL count from it
  local ahead = s - now
  if own and seq <= own.n then
    local fill = math.ceil((BURST - tokens) / rate)
    return stale(own, math.floor(tokens + tol), (fill > 0) and (fill + ahead) or 0, 0)
  end
  local kept, granted, retry, lapse_after = 0, 0, 0, -1
  if mine then
    kept = math.min(held, mine.a)
    outstanding = outstanding - mine.a + kept
  end
  if mode == 't' then
    local avail = math.floor(tokens + tol)
    if avail >= need then
      granted = math.min(want, avail)
      tokens = math.max(0, tokens - granted)
      lapse_after = bound
    else
      retry = math.ceil((need - tokens) / rate) + ahead
      -- what is on record comes back only as it lapses or is given back
      if BURST - outstanding < need then
        local first = last_lapse
        for _, r in ipairs(records) do
          if r.l > now and r.l < first then first = r.l end
        end
        retry = math.max(retry, first - now)
      end
      retry = math.max(1, retry)
    end
  else
    tokens = tokens + kept
    outstanding = outstanding - kept
    kept = 0
  end
  local amount = kept + granted
  if amount > 0 then
    local lapse = (granted > 0) and (now + bound) or mine.l
    live[#live + 1] = { a = amount, l = lapse, n = seq, id = id }
    if lapse > last_lapse then last_lapse = lapse end
  end
  local packed = { struct.pack('<ddd', tokens, s, q) }
  for _, r in ipairs(live) do
    packed[#packed + 1] = struct.pack('<dddBc0', r.a, r.l, r.n, #r.id, r.id)
  end
  local fill = math.ceil((BURST - tokens) / rate)
  redis.call('SET', key, table.concat(packed), 'PX', ttl_ms(math.max(0, last_lapse - now, ahead) + fill))
  return { now, granted, kept, math.floor(tokens + tol), (fill > 0) and (fill + ahead) or 0, retry, lapse_after, 0 }
end

-- Fixed window: a slice is counted in the window it is taken in and spent only within it (it lapses at the window's
-- end at the latest). The instance's record (field i:<instance>) says how much of its slice a give-back may refund,
-- so a give-back delivered twice or late refunds no more than the slice; records of ended windows are dropped.
local function fixed_window()
  local k = math.floor(now / WINDOW)
  local st = redis.call('HMGET', key, 'w', 'c', 'l', me)
  local current, length, count = k, WINDOW, 0
  if st[1] then
    local w, n, l = tonumber(st[1]), tonumber(st[2]), tonumber(st[3]) or WINDOW
    if w * l >= (k + 1) * WINDOW then
      current, length, count = w, l, n
    elseif (w + 1) * l > k * WINDOW then
      count = n
    end
  end
  local start = current * length
  local window_end = start + length - now
  local own = parse(st[4])
  if own and seq <= own.n then
    return stale(own, LIMIT - count, window_end, start)
  end
  if st[1] and tonumber(st[1]) * (tonumber(st[3]) or WINDOW) ~= start then
    -- a new window: the records of the one before are void
    for _, f in ipairs(redis.call('HKEYS', key)) do
      if string.sub(f, 1, 2) == 'i:' then redis.call('HDEL', key, f) end
    end
    own = nil
  end
  local mine = (own and own.l > now and held_window == start) and own or nil
  local kept, granted, retry, lapse_after = 0, 0, 0, -1
  if mine then
    kept = math.min(held, mine.a)
  end
  if mode == 't' then
    if LIMIT - count >= need then
      granted = math.min(want, LIMIT - count)
      count = count + granted
      lapse_after = math.min(window_end, bound)
    else
      retry = math.max(1, window_end)
    end
  else
    count = math.max(0, count - kept)
    kept = 0
  end
  local amount = kept + granted
  if amount > 0 then
    local lapse = (granted > 0) and (now + lapse_after) or mine.l
    redis.call('HSET', key, me, num(amount) .. ' ' .. num(lapse) .. ' ' .. num(seq))
  elseif own then
    redis.call('HDEL', key, me)
  end
  redis.call('HSET', key, 'w', num(current), 'l', num(length), 'c', num(count))
  -- a millisecond more, as the exact scripts' window writes, so that their later writes keep it (common.lua)
  pexpire(window_end + 1000)
  return { now, granted, kept, LIMIT - count, window_end, retry, lapse_after, start }
end

if code == 'tb' then
  return token_bucket()
end
return fixed_window()
