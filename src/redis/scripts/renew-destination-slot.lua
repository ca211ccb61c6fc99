--[[
  Renews the lease of a slot still held (a slot handed over to the next attempt of this process).

  KEYS[1] the destination's slots: sorted set of attempt tokens scored by the end of their lease
  ARGV[1] the lease (ms)
  ARGV[2] the attempt's token

  Returns 1.
]]
--- @include redis-now
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
