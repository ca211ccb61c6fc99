-- `now`: Redis's clock in milliseconds, so that processes with skewed clocks agree.
local redisTime = redis.call('TIME')
local now = tonumber(redisTime[1]) * 1000 + math.floor(tonumber(redisTime[2]) / 1000)
