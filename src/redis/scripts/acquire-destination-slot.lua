--[[
  Takes one of a destination's slots unless the limit is reached; expired leases are dropped first.

  KEYS[1] the destination's slots: sorted set of attempt tokens scored by the end of their lease
  ARGV[1] the limit (attempts at once)
  ARGV[2] the lease (ms)
  ARGV[3] the attempt's token

  Returns 1 when taken, 0 when every slot is held.
]]
--- @include redis-now
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
