-- laravel_later: Laravel's RedisQueue::later, a job ready after a delay.
--
-- KEYS[1] -> queues:NAME:delayed zset (payload -> unix seconds it is due)
-- ARGV[1] -> delay, whole seconds (>= 0)
-- ARGV[2..] -> payloads, Laravel's JSON (at most 1000)
--
-- Returns: the number of payloads added.
--
-- Scores are Laravel's: integer unix seconds, not jobgen's milliseconds.
-- The time is the Redis clock's; Laravel's own producers use the PHP
-- host's clock.

-- uses: wrong_type
local bad = wrongType({1, 'zset'})
if bad then return bad end

local delay = tonumber(ARGV[1])
if not delay or delay < 0 then
  return redis.error_reply('laravel_later: bad delay')
end
local due = tonumber(redis.call('TIME')[1]) + delay
local n = 0
for i = 2, #ARGV do
  n = n + redis.call('ZADD', KEYS[1], due, ARGV[i])
end
return n
