-- prune: delete failed entries older than an age.
--
-- KEYS[1] -> failed zset
-- KEYS[2] -> failed payloads hash
-- KEYS[3] -> failed info hash
-- ARGV[1] -> age in ms: entries that failed before now - age go
-- ARGV[2] -> limit: at most this many entries go per call (at most 1000)
--
-- Returns: the number of entries deleted.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cutoff = string.format('%d', now - tonumber(ARGV[1]))
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. cutoff, 'LIMIT', 0, tonumber(ARGV[2]))
if #old == 0 then return 0 end
redis.call('ZREM', KEYS[1], unpack(old))
redis.call('HDEL', KEYS[2], unpack(old))
redis.call('HDEL', KEYS[3], unpack(old))
return #old
