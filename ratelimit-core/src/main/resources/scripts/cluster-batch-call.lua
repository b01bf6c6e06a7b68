-- The keys of a batch on a Cluster master (the backend's natural batching, grouped by master): KEYS[1] the first
-- request's key, declared so that Redis routes and checks it; ARGV[1] '' (the server's TIME), then per request its
-- cost, then the keys of requests 2 .. n. LuaScripts puts the shebang allowing keys of other slots before the first
-- line. Redis checks only declared keys before a script runs, and fails a call on a key this node does not serve
-- (another master's, or missing in a slot migrating away) at that call, after the calls before it ran: so every key
-- is first read through pcall, and when one is not served here nothing is decided and the reply is { -1 } (the Java
-- side, ClusterBatching, then sends each request on its own). Otherwise batch-call.lua follows, on these keys.
local count = #ARGV / 2
local keys = { KEYS[1] }
for i = 2, count do
  local key = ARGV[count + i]
  keys[i] = key
  if key ~= KEYS[1] then
    local served = redis.pcall('EXISTS', key)
    if type(served) == 'table' and served.err then
      return { -1 }
    end
  end
end
local KEYS = keys
