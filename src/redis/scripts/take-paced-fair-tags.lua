--[[
  Fair pacing, then fair tagging (src/queues/fair-share.ts), in one script, so that no restart of the
  count (restart-fair-count.lua) falls between them.

  Pacing: how long an organisation's next jobs are held back. A generic cell rate: the organisation's
  theoretical time of its next job moves on by 1/rate per job; a job is held back by how far that time
  runs ahead of now beyond `burst` jobs. It applies only in company: while another organisation took
  turns within the company window, or while this one's theoretical time is still ahead (its later
  jobs must stay behind its held-back ones). The pace outlives a restart of the count: a restarted
  count must not let later jobs overtake. Tagging: includes/fair-tags.lua.

  KEYS[1] the queue's count (epoch)
  KEYS[2] the queue's virtual time
  KEYS[3] the organisation's last tag, as `<epoch>:<tag>`
  KEYS[4] the organisations that took turns recently: sorted set scored by Redis's clock (ms)
  KEYS[5] the organisation's theoretical time of its next job (ms)
  KEYS[6] until when any organisation of the queue is held back (ms): the count restarts only after it
  ARGV[1] how many jobs
  ARGV[2] the organisation's tag lifetime (s)
  ARGV[3] the organisation
  ARGV[4] the pace (jobs per second, > 0)
  ARGV[5] the burst (jobs)
  ARGV[6] the company window (ms)

  Returns {how many ms from now the first job is due (negative: that much ahead of its pace),
  Redis's clock (ms), 1 when paced else 0, the first tag of the batch}.
]]
--- @include redis-now
redis.call('ZADD', KEYS[4], now, ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - tonumber(ARGV[6]))
redis.call('PEXPIRE', KEYS[4], ARGV[6])
local due, paced = 0, 0
local held = tonumber(redis.call('GET', KEYS[5]) or '0')
if held > now or redis.call('ZCARD', KEYS[4]) > 1 then
  local interval = 1000 / tonumber(ARGV[4])
  local next = math.max(held, now)
  local after = next + tonumber(ARGV[1]) * interval
  local lifetime = math.ceil(after - now) + 1000
  redis.call('SET', KEYS[5], string.format('%.3f', after), 'PX', lifetime)
  if after > tonumber(redis.call('GET', KEYS[6]) or '0') then redis.call('SET', KEYS[6], string.format('%.3f', after), 'PX', lifetime) end
  due, paced = math.floor(next - now - tonumber(ARGV[5]) * interval), 1
end
--- @include fair-tags
return {due, now, paced, first}
