-- A request of one entry: KEYS[1] the key; ARGV[1] the cost, ARGV[2] the request id (absent unless the algorithm
-- keeps it), ARGV[3] the explicit time in microseconds (absent: the server's TIME). Returns the time used, then
-- decide's four figures, and for the sorted sets the fifth (the first sequence number taken; a nil ends the reply).
-- The Java side of this layout: SingleEntryCall in core.redis.
local now
if ARGV[3] then
  now = tonumber(ARGV[3])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
return { now, decide(KEYS[1], tonumber(ARGV[1]), ARGV[2] or '', now) }
