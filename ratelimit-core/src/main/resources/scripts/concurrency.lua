-- Concurrency. State: sorted set of the permits in flight, scored by when they were taken. At most limit in
-- flight; a permit is given back on release (refund) or stops counting once held longer than window.
-- The retry-after of a denial is when the oldest needed permit would be reclaimed at the latest.
ALG.c2 = {
  check = zset_check,
  commit = zset_commit,
  refund = zset_refund
}
