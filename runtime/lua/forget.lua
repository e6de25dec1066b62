-- forget: delete entries from the failed store.
--
-- KEYS[1] -> failed zset
-- KEYS[2] -> failed payloads hash
-- KEYS[3] -> failed info hash
-- KEYS[4] -> failed errors hash (optional: job ID -> its attempts' errors)
-- ARGV[1..] -> failed job IDs (at most 1000)
--
-- Returns: the number of entries deleted.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type

local bad = wrongType({1, 'zset', 2, 'hash', 3, 'hash'}) or (KEYS[4] and wrongType({4, 'hash'}))
if bad then return bad end

local n = redis.call('ZREM', KEYS[1], unpack(ARGV))
redis.call('HDEL', KEYS[2], unpack(ARGV))
redis.call('HDEL', KEYS[3], unpack(ARGV))
if KEYS[4] then redis.call('HDEL', KEYS[4], unpack(ARGV)) end
return n
