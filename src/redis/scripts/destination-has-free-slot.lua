--[[
  Whether a destination has a free slot right now (leases that ended count as free).

  KEYS[1] the destination's slots: sorted set of attempt tokens scored by the end of their lease
  ARGV[1] the limit (attempts at once)

  Returns 1 when a slot is free, else 0.
]]
--- @include redis-now
return redis.call('ZCOUNT', KEYS[1], now, '+inf') < tonumber(ARGV[1]) and 1 or 0
