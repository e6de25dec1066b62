-- laravel_release: Laravel's RedisQueue::deleteAndRelease, a reserved job back to
-- the delayed set for another attempt.
--
-- KEYS[1] -> queues:NAME:delayed zset (payload -> unix seconds it is due)
-- KEYS[2] -> queues:NAME:reserved zset
-- ARGV[1] -> the reserved payload, byte for byte as pop returned it
-- ARGV[2] -> delay, whole seconds (>= 0)
--
-- Returns: 1 if released; 0 if the job was no longer reserved under that
-- payload (its retry_after ran out and migrate moved it back), in which
-- case nothing changes. Laravel's own script adds the job to the delayed
-- set either way, which can run it twice.

-- uses: wrong_type
-- A key of another type would fail a write after others were made: the
-- keys are checked before the first write.
local bad = wrongType({1, 'zset', 2, 'zset'})
if bad then return bad end

local delay = tonumber(ARGV[2])
if not delay or delay < 0 then
  return redis.error_reply('laravel_release: bad delay')
end
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  return 0
end
local now = tonumber(redis.call('TIME')[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[1], now + delay, ARGV[1])
return 1
