-- hooks_due: record that a job about to be failed has hooks to run
-- (its batch, its chain's catch, its failed hook, its unique lock), or
-- renew that record while they run.
--
-- KEYS[1] -> hooks zset ("job ID token" -> Redis ms)
-- ARGV[1] -> "job ID token" of the reservation being failed
-- ARGV[2] -> "XX" to renew only a record that exists (the heartbeat of a
--            worker running the hooks); "" to record
--
-- Errors: "WRONGTYPE <key> ..." if its key holds another type; it writes
-- nothing then.
--
-- Returns: the Redis time it recorded, in ms.

-- uses: wrong_type

local bad = wrongType({1, 'zset'})
if bad then return bad end

-- uses: now_ms
local now = nowMs()
if ARGV[2] == 'XX' then
  redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
else
  redis.call('ZADD', KEYS[1], now, ARGV[1])
end
return now
