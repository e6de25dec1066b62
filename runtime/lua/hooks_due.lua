-- hooks_due: record that a job about to be failed has hooks to run
-- (its batch, its chain's catch, its failed hook, its unique lock).
--
-- KEYS[1] -> hooks zset ("job ID token" -> Redis ms)
-- ARGV[1] -> "job ID token" of the reservation being failed
--
-- Returns: the Redis time it recorded, in ms.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
return now
