--[[
  Adds hits to a rate-limit window and, for a new window, sets its expiry: one round trip.

  KEYS[1] the window's counter
  ARGV[1] the window's lifetime (ms)
  ARGV[2] how many hits

  Returns the window's count.
]]
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count
