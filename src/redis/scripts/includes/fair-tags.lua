-- Fair tagging (take-fair-tags.lua, take-paced-fair-tags.lua): `first`, the first tag of ARGV[1] jobs
-- of an organisation, one past the larger of the queue's virtual time (KEYS[2]) and the organisation's
-- last tag (KEYS[3], kept ARGV[2] seconds). The last tag carries the count (KEYS[1], the epoch) it was
-- taken in: after a restart of the count, older tags count as none.
local epoch = redis.call('GET', KEYS[1]) or '0'
local vt = tonumber(redis.call('GET', KEYS[2]) or '0')
local lastEpoch, lastTag = string.match(redis.call('GET', KEYS[3]) or '', '^(%d+):(%d+)$')
local last = 0
if lastEpoch == epoch then last = tonumber(lastTag) end
local first = math.max(vt, last) + 1
redis.call('SET', KEYS[3], epoch .. ':' .. string.format('%d', first + tonumber(ARGV[1]) - 1), 'EX', ARGV[2])
