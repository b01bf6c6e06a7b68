-- The requests of a batch bound for one Cluster master (the backend's natural batching, grouped by master): KEYS[1]
-- the first request's key, declared so that Redis routes and checks it; ARGV[1] '' (the server's TIME), then per
-- request its cost, then the keys of requests 2 .. n, which may be in other slots. LuaScripts writes the shebang
-- allowing keys of several slots (Redis 7) and KEEPS_ENTRIES before this. batch-call.lua follows, on these keys.
-- Redis checks only declared keys before a script runs; a command on a key this node does not serve (another
-- master's, or missing in a slot migrating away) fails when it is called, after the commands before it ran. Every
-- decide() touches its one key, and its first command on it fails or none does: so a decision whose key is not
-- served here is caught before it wrote anything and answered with admits -1 (the Java side, ClusterBatching, sends
-- it again on its own), and every other decision of the batch is made whole.
local count = #ARGV / 2
local keys = { KEYS[1] }
for i = 2, count do
  keys[i] = ARGV[count + i]
end
local KEYS = keys
local decide_served = decide
local function decide(key, cost, now)
  local ok, admits, remaining, reset, retry, seq = pcall(decide_served, key, cost, now)
  if ok then
    return admits, remaining, reset, retry, seq
  end
  local message = type(admits) == 'table' and admits.err or tostring(admits)
  if not string.find(message, 'non local key', 1, true) then
    error(admits)
  end
  return -1, 0, 0, 0, KEEPS_ENTRIES and 0 or nil
end
