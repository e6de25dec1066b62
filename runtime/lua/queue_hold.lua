-- queue_hold: hold a queue, so that no reserve takes a job of it until
-- the hold ends (runtime.HoldQueue; lib/flow_limit.lua reads it). The
-- hold ends at the Redis clock's now + ARGV[1] ms, unless a longer hold
-- is on: a hold is never shortened. ARGV[1] of 0 ends the hold now.
--
-- KEYS[1] -> settings hash (field hold: Redis ms the hold ends)
-- KEYS[2] -> notify list (doorbell), rung when the hold ends now
-- ARGV[1] -> the hold in ms, 0 to end it
--
-- Returns: the Redis ms the hold ends at (0 once ended), and the Redis
-- clock now in ms.
-- Errors: "WRONGTYPE <key> ..." if a key holds another type; nothing is
-- written then.

-- uses: wrong_type, now_ms

local bad = wrongType({1, 'hash', 2, 'list'})
if bad then return bad end

local now = nowMs()
local ms = tonumber(ARGV[1])
if ms <= 0 then
  redis.call('HDEL', KEYS[1], 'hold')
  if redis.call('LLEN', KEYS[2]) == 0 then redis.call('RPUSH', KEYS[2], '1') end
  return {0, now}
end
local untilMs = now + ms
local cur = tonumber(redis.call('HGET', KEYS[1], 'hold') or '0') or 0
if cur > untilMs then return {cur, now} end
redis.call('HSET', KEYS[1], 'hold', string.format('%d', untilMs))
return {untilMs, now}
