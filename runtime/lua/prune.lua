-- prune: delete failed entries older than an age.
--
-- KEYS[1] -> failed zset
-- KEYS[2] -> failed payloads hash
-- KEYS[3] -> failed info hash
-- KEYS[4] -> failed errors hash (optional: job ID -> its attempts' errors)
-- ARGV[1] -> age in ms: entries that failed before now - age go
-- ARGV[2] -> limit: at most this many entries go per call (at most 1000)
--
-- Returns: the number of entries deleted.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type

local bad = wrongType({1, 'zset', 2, 'hash', 3, 'hash'}) or (KEYS[4] and wrongType({4, 'hash'}))
if bad then return bad end

-- uses: now_ms
local now = nowMs()
local cutoff = string.format('%d', now - tonumber(ARGV[1]))
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. cutoff, 'LIMIT', 0, tonumber(ARGV[2]))
if #old == 0 then return 0 end
redis.call('ZREM', KEYS[1], unpack(old))
redis.call('HDEL', KEYS[2], unpack(old))
redis.call('HDEL', KEYS[3], unpack(old))
if KEYS[4] then redis.call('HDEL', KEYS[4], unpack(old)) end
return #old
