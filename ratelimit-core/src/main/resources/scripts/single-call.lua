-- A request of one entry: KEYS[1] the key; ARGV[1] the cost, ARGV[2] the explicit time in microseconds (absent: the
-- server's TIME). Returns the time used, then decide's four figures, and for the sorted sets the fifth (the first
-- sequence number taken; a nil ends the reply). No request id travels: no algorithm's acquire stores one (a refund
-- names its acquire by the time returned here, and the sorted sets by their sequence).
-- The Java side of this layout: SingleEntryCall in core.redis.
local now
if ARGV[2] then
  now = tonumber(ARGV[2])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
return { now, decide(KEYS[1], tonumber(ARGV[1]), now) }
