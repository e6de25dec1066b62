-- laravel_extend: push a running job's reservation forward, so that a job longer
-- than retry_after is not migrated back and run twice. Laravel has no
-- such call; its workers only ZREM by payload, so they tolerate it.
--
-- KEYS[1] -> queues:NAME:reserved zset
-- ARGV[1] -> the reserved payload, byte for byte as pop returned it
-- ARGV[2] -> lease from now, whole seconds (>= 1)
--
-- Returns: 1 if the reservation is still held (and now ends later); 0 if
-- it is gone, and nothing changes.

-- uses: wrong_type
local bad = wrongType({1, 'zset'})
if bad then return bad end

local lease = tonumber(ARGV[2])
if not lease or lease < 1 then
  return redis.error_reply('laravel_extend: bad lease')
end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
local now = tonumber(redis.call('TIME')[1])
redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[1])
return 1
