-- Driver. KEYS: one key per entry. ARGV: mode ('a' acquire, 'r' release, 'p' inspect: check and take nothing),
-- explicit time in microseconds or '' for the server's TIME (a release passes the time its acquire returned),
-- request id (a release's, which the windows keep to refund once; '' on an acquire), then per entry: algorithm
-- code, limit, window (us), burst, cost, minimum interval (us); a release then passes one more per entry: the first
-- sequence number its acquire reported for it (0 when none). The Java side of this layout: ScriptCall (arguments)
-- and ScriptReply (reply) in core.redis.
-- Acquire (and inspect) returns the time it used (us), then seven numbers per entry: admits (1/0), remaining and
-- reset-after (us) once the cost is taken, remaining and reset-after as the state is, retry-after (us), and the first
-- sequence number the entry took (the sorted sets' members; 0 when it took none). Every entry is checked
-- against the state before the request; only when all admit does any of them take its cost. The caller reports
-- the 'taken' figures when the whole request was admitted and the 'as is' figures otherwise (on Cluster a request
-- can span several scripts, so only the caller knows).
local now
if ARGV[2] ~= '' then
  now = tonumber(ARGV[2])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local rid = ARGV[3]
local entries = {}
for i = 1, #KEYS do
  local b = 3 + (i - 1) * 6
  entries[i] = {
    key = KEYS[i], alg = ALG[ARGV[b + 1]], limit = tonumber(ARGV[b + 2]), window = tonumber(ARGV[b + 3]),
    burst = tonumber(ARGV[b + 4]), cost = tonumber(ARGV[b + 5]), min = tonumber(ARGV[b + 6]),
    now = now, rid = rid
  }
end

if ARGV[1] == 'r' then
  local seqs = 3 + #KEYS * 6
  for i = 1, #entries do
    entries[i].seq = tonumber(ARGV[seqs + i]) or 0
    entries[i].alg.refund(entries[i])
  end
  return {1}
end

local all = true
for i = 1, #entries do
  local c = entries[i]
  c.alg.check(c)
  all = all and c.ok
end
local out = { now }
for i = 1, #entries do
  local c = entries[i]
  if all and ARGV[1] == 'a' then
    c.alg.commit(c)
  end
  out[#out + 1] = c.ok and 1 or 0
  out[#out + 1] = c.ra or c.rb
  out[#out + 1] = c.za or c.zb
  out[#out + 1] = c.rb
  out[#out + 1] = c.zb
  out[#out + 1] = c.ok and 0 or c.retry
  out[#out + 1] = c.seq or 0
end
return out
