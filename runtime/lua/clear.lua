-- clear: delete every job of a queue that is ready, delayed or reserved.
-- The failed store and the paused flag are kept.
--
-- KEYS[1] -> ready list
-- KEYS[2] -> delayed zset
-- KEYS[3] -> reserved zset
-- KEYS[4] -> payloads hash
-- KEYS[5] -> state hash
-- KEYS[6] -> notify list
-- KEYS[7] -> errors hash (optional: the jobs' attempts' errors)
-- KEYS[8] -> progress hash (optional: how far running jobs got)
--
-- Returns: the number of jobs deleted.
--
-- Errors: "WRONGTYPE <key> ..." if the payloads hash, the one key it
-- reads, holds another type; it deletes nothing then. DEL takes a key of
-- any type.

-- uses: wrong_type

local bad = wrongType({4, 'hash'})
if bad then return bad end

local n = redis.call('HLEN', KEYS[4])
redis.call('DEL', unpack(KEYS))
return n
