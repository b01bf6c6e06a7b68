-- Sliding window log. State: sorted set of admitted requests scored by time. Exact: at most limit requests in
-- any window of length window. Optional minimum interval (c.min) between two admitted requests.
ALG.s2 = {
  check = zset_check,
  commit = zset_commit,
  exhausted = zset_exhausted,
  refund = zset_refund
}
