--[[
  Moves a fair queue's virtual time to the priority of a job that starts, never back.

  KEYS[1] the queue's virtual time
  ARGV[1] the job's priority
  ARGV[2] the key's lifetime (s)

  Returns 0.
]]
if tonumber(ARGV[1]) > tonumber(redis.call('GET', KEYS[1]) or '0') then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
return 0
