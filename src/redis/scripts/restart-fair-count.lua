--[[
  Starts a fair queue's count again (a new epoch, the virtual time back to 0) once its virtual time
  is past a bound. Not while an organisation's jobs are held back by its pace: they keep the old
  count's tags, and the organisation's later jobs would come back with smaller ones.

  KEYS[1] until when any organisation of the queue is held back (ms)
  KEYS[2] the queue's count (epoch)
  KEYS[3] the queue's virtual time
  ARGV[1] the virtual time past which the count restarts

  Returns 1 when restarted, else 0.
]]
--- @include redis-now
if tonumber(redis.call('GET', KEYS[1]) or '0') > now then return 0 end
if tonumber(redis.call('GET', KEYS[3]) or '0') <= tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[2])
redis.call('DEL', KEYS[3])
return 1
