-- The decision of one entry under one policy, through the algorithm's file, for the algorithms without a script of
-- their own under fast/. The policy's parameters are not arguments: the assembler writes them into the script's
-- first lines (CODE, LIMIT, WINDOW, BURST, MIN), one script per set of parameters, so a call carries only what
-- changes. decide(key, cost, now) takes the cost when it admits and returns admits (1/0), remaining and
-- reset-after (us) (once taken when admitted, as is otherwise) and retry-after (us; when admitted, how long a request
-- of cost 1 stays denied by what it left, from the algorithm's exhausted(c) where it has one: 0 when at once or not
-- known), and for the sorted sets a fifth: the first sequence number the entry took (0 when denied; nil for the
-- other algorithms). Called by single-call.lua (a request of one entry) and batch-call.lua (several such requests in
-- one call).
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
