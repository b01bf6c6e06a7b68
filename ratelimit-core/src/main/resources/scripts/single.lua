-- The decision of one entry under one policy through the algorithm's file, for the algorithms without a script under
-- fast/; the policy's parameters (CODE, LIMIT, WINDOW, BURST, MIN) are written into the script's first lines.
-- decide(key, cost, now) takes the cost when it admits and returns admits (1/0), remaining and reset-after (us; taken
-- when admitted, as is otherwise), retry-after (us; when admitted, how long a request of cost 1 stays denied by what
-- it left, from exhausted(c): 0 when at once or not known), and for the sorted sets the first sequence number taken.
local function decide(key, cost, now)
  local c = {
    key = key, alg = ALG[CODE], limit = LIMIT, window = WINDOW, burst = BURST, cost = cost, min = MIN, now = now
  }
  c.alg.check(c)
  if c.ok then
    c.alg.commit(c)
    local exhausted = 0
    if c.alg.exhausted then
      exhausted = c.alg.exhausted(c)
    end
    return 1, c.ra, c.za, exhausted, c.seq
  end
  return 0, c.rb, c.zb, c.retry, c.seq
end
