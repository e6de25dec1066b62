-- laravel_delete: Laravel's RedisQueue::deleteReserved, a finished job.
--
-- KEYS[1] -> queues:NAME:reserved zset
-- ARGV[1] -> the reserved payload, byte for byte as pop returned it
--
-- Returns: 1 if deleted; 0 if the job was no longer reserved under that
-- payload.

-- uses: wrong_type
local bad = wrongType({1, 'zset'})
if bad then return bad end

return redis.call('ZREM', KEYS[1], ARGV[1])
