-- clear: delete every job of a queue that is ready, delayed or reserved.
-- The failed store and the paused flag are kept.
--
-- KEYS[1] -> ready list
-- KEYS[2] -> delayed zset
-- KEYS[3] -> reserved zset
-- KEYS[4] -> payloads hash
-- KEYS[5] -> state hash
-- KEYS[6] -> notify list
--
-- Returns: the number of jobs deleted.

local n = redis.call('HLEN', KEYS[4])
redis.call('DEL', unpack(KEYS))
return n
