--[[
  Fair tagging (src/queues/fair-share.ts): the tags of an organisation's next jobs, one past the
  larger of the queue's virtual time and the organisation's last tag. An organisation's last tag
  carries the count (epoch) it was taken in: after a restart of the count, older tags count as none.

  KEYS[1] the queue's count (epoch)
  KEYS[2] the queue's virtual time
  KEYS[3] the organisation's last tag, as `<epoch>:<tag>`
  ARGV[1] how many jobs
  ARGV[2] the organisation's tag lifetime (s)

  Returns the first tag of the batch (the batch takes it and the next count - 1).
]]
local epoch = redis.call('GET', KEYS[1]) or '0'
local vt = tonumber(redis.call('GET', KEYS[2]) or '0')
local lastEpoch, lastTag = string.match(redis.call('GET', KEYS[3]) or '', '^(%d+):(%d+)$')
local last = 0
if lastEpoch == epoch then last = tonumber(lastTag) end
local first = math.max(vt, last) + 1
redis.call('SET', KEYS[3], epoch .. ':' .. string.format('%d', first + tonumber(ARGV[1]) - 1), 'EX', ARGV[2])
return first
