--[[
  Frees an attempt's slot and takes the oldest jobs waiting for the destination, to wake them: one
  round trip where a release and its wake-ups took one each.

  KEYS[1] the destination's slots: sorted set of attempt tokens scored by the end of their lease
  KEYS[2] the destination's waiters: sorted set of postponed job ids scored by when they joined
  ARGV[1] the attempt's token
  ARGV[2] how many waiters to take (0: none)

  Returns the ids taken, oldest first.
]]
redis.call('ZREM', KEYS[1], ARGV[1])
local count = tonumber(ARGV[2])
if count < 1 then return {} end
local taken = redis.call('ZPOPMIN', KEYS[2], count)
local ids = {}
for i = 1, #taken, 2 do ids[#ids + 1] = taken[i] end
return ids
