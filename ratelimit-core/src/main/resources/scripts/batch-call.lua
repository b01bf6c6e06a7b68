-- Several requests of one entry each under the same policy, in one call (the backend's natural batching): each is
-- decided on its own, in the order of KEYS, at one time, exactly as if each were its own call in that order. KEYS:
-- one key per request (a key may repeat). ARGV[1]: the explicit time in microseconds, or '' for the server's TIME;
-- then per request its cost. Returns the time used, then
-- decide's four figures per request, five for the sorted sets (the first sequence number taken). The Java side of
-- this layout: CallBatcher in core.redis.
local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local out = { now }
for i = 1, #KEYS do
  local ok, remaining, reset, retry, seq = decide(KEYS[i], tonumber(ARGV[i + 1]), now)
  out[#out + 1] = ok
  out[#out + 1] = remaining
  out[#out + 1] = reset
  out[#out + 1] = retry
  if seq then
    out[#out + 1] = seq
  end
end
return out
