-- Driver of a single-entry acquire, the common request, for algorithms without a script of their own under fast/.
-- The policy's parameters are not arguments: the assembler writes them into the script's first line (local
-- TIME_ARG, CODE, LIMIT, WINDOW, BURST, MIN = ...), one script per set of parameters, so a call carries only what
-- changes. KEYS[1]: the key. ARGV[1]: the cost; ARGV[2]: the request id (absent unless the algorithm keeps it);
-- ARGV[3]: the explicit time in microseconds (absent: the server's TIME).
-- Returns the time used, admits (1/0), remaining and reset-after (us) (once taken when admitted, as is otherwise),
-- and retry-after (us, 0 when admitted): the figures a request of one entry reports. The Java side of this layout:
-- SingleEntryCall in core.redis.
local now
if ARGV[3] then
  now = tonumber(ARGV[3])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local c = {
  key = KEYS[1], alg = ALG[CODE], limit = LIMIT, window = WINDOW, burst = BURST, cost = tonumber(ARGV[1]), min = MIN,
  now = now, rid = ARGV[2] or ''
}
c.alg.check(c)
if c.ok then
  c.alg.commit(c)
  return { now, 1, c.ra, c.za, 0 }
end
return { now, 0, c.rb, c.zb, c.retry }
