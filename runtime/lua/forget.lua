-- forget: delete entries from the failed store.
--
-- KEYS[1] -> failed zset
-- KEYS[2] -> failed payloads hash
-- KEYS[3] -> failed info hash
-- ARGV[1..] -> failed job IDs (at most 1000)
--
-- Returns: the number of entries deleted.

local n = redis.call('ZREM', KEYS[1], unpack(ARGV))
redis.call('HDEL', KEYS[2], unpack(ARGV))
redis.call('HDEL', KEYS[3], unpack(ARGV))
return n
