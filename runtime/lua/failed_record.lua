-- failed_record: add a job that failed outside this engine's queues (a
-- Laravel job run by the laravel package's worker) to the failed store,
-- then keep the store within its bounds.
--
-- KEYS[1] -> failed zset
-- KEYS[2] -> failed payloads hash
-- KEYS[3] -> failed info hash
-- ARGV[1] -> most failed jobs to keep (0: no limit)
-- ARGV[2] -> oldest failed job to keep, in ms of age (0: no limit)
-- ARGV[3] -> job ID
-- ARGV[4] -> encoded envelope
-- ARGV[5] -> encoded failure info
--
-- Returns: 1 if recorded, 0 if the store holds that ID already (nothing
-- changes). At most 1000 old entries are trimmed per call.

if redis.call('ZSCORE', KEYS[1], ARGV[3]) then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], string.format('%d', now), ARGV[3])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[5])
local function drop(old)
  if #old == 0 then return end
  redis.call('ZREM', KEYS[1], unpack(old))
  redis.call('HDEL', KEYS[2], unpack(old))
  redis.call('HDEL', KEYS[3], unpack(old))
end
local max_age = tonumber(ARGV[2])
if max_age > 0 then
  drop(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%d', now - max_age), 'LIMIT', 0, 1000))
end
local max_count = tonumber(ARGV[1])
if max_count > 0 then
  local over = redis.call('ZCARD', KEYS[1]) - max_count
  if over > 0 then
    drop(redis.call('ZRANGE', KEYS[1], 0, math.min(over, 1000) - 1))
  end
end
return 1
