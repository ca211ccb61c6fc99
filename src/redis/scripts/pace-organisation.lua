--[[
  Fair pacing (src/queues/fair-share.ts): how long an organisation's next jobs are held back. A
  generic cell rate: the organisation's theoretical time of its next job moves on by 1/rate per
  job; a job is held back by how far that time runs ahead of now beyond `burst` jobs. It applies
  only in company: while another organisation took turns within the company window, or while this
  one's theoretical time is still ahead (its later jobs must stay behind its held-back ones). The
  pace outlives a restart of the count: a restarted count must not let later jobs overtake.

  KEYS[1] the organisations that took turns recently: sorted set scored by Redis's clock (ms)
  KEYS[2] the organisation's theoretical time of its next job (ms)
  KEYS[3] until when any organisation of the queue is held back (ms): the count restarts only after it
  ARGV[1] the organisation
  ARGV[2] how many jobs
  ARGV[3] the pace (jobs per second, > 0)
  ARGV[4] the burst (jobs)
  ARGV[5] the company window (ms)

  Returns {how many ms from now the first job is due (negative: that much ahead of its pace),
  Redis's clock (ms), 1 when paced else 0}.
]]
--- @include redis-now
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[5]))
redis.call('PEXPIRE', KEYS[1], ARGV[5])
local held = tonumber(redis.call('GET', KEYS[2]) or '0')
if held <= now and redis.call('ZCARD', KEYS[1]) <= 1 then return {0, now, 0} end
local interval = 1000 / tonumber(ARGV[3])
local next = math.max(held, now)
local after = next + tonumber(ARGV[2]) * interval
local lifetime = math.ceil(after - now) + 1000
redis.call('SET', KEYS[2], string.format('%.3f', after), 'PX', lifetime)
if after > tonumber(redis.call('GET', KEYS[3]) or '0') then redis.call('SET', KEYS[3], string.format('%.3f', after), 'PX', lifetime) end
return {math.floor(next - now - tonumber(ARGV[4]) * interval), now, 1}
