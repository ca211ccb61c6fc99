--[[
  Takes one of a destination's slots unless the limit is reached; expired leases are dropped first.
  When every slot is held, the answer says how many postponed jobs are ahead of the job asking in the
  destination's line (its place if it is listed, else the length of the list): its postponement then
  needs no round trip of its own to ask; and the length of the list, the place of the process's next
  jobs, which go behind the line without a try of their own. A job that takes a slot leaves the list:
  listed, it came back on its own (its delay ended before a release woke it).

  KEYS[1] the destination's slots: sorted set of attempt tokens scored by the end of their lease
  KEYS[2] the destination's waiters: sorted set of postponed job ids scored by when they joined
  ARGV[1] the limit (attempts at once)
  ARGV[2] the lease (ms)
  ARGV[3] the attempt's token
  ARGV[4] the job's id (empty: none)

  Returns {1} when taken, {0, waiters ahead, waiters listed} when every slot is held.
]]
--- @include redis-now
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  local listed = redis.call('ZCARD', KEYS[2])
  local place = ARGV[4] ~= '' and redis.call('ZRANK', KEYS[2], ARGV[4])
  return {0, place or listed, listed}
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if ARGV[4] ~= '' then redis.call('ZREM', KEYS[2], ARGV[4]) end
return {1}
