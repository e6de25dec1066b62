-- failed_record: add a job that failed outside this engine's queues (a
-- Laravel job run by the laravel package's worker) to the failed store,
-- then keep the store within its bounds.
--
-- KEYS[1] -> failed zset
-- KEYS[2] -> failed payloads hash
-- KEYS[3] -> failed info hash
-- KEYS[4] -> failed errors hash, trimmed with the store
-- KEYS[5] -> failed trimmed hash: what trimming dropped
--            (lib/failed_trim.lua)
-- ARGV[1] -> most failed jobs to keep (0: no limit)
-- ARGV[2] -> oldest failed job to keep, in ms of age (0: no limit)
-- ARGV[3] -> job ID
-- ARGV[4] -> encoded envelope
-- ARGV[5] -> encoded failure info
--
-- Errors: "WRONGTYPE <key> ..." if a key holds another type; it writes
-- nothing then.
--
-- Returns: {recorded, trimmed}: recorded is 1, or 0 if the store holds
-- that ID already (nothing changes); trimmed is how many old entries
-- trimming dropped, at most 1000 per call.

-- uses: wrong_type, now_ms, failed_trim
local bad = wrongType({1, 'zset', 2, 'hash', 3, 'hash', 4, 'hash', 5, 'hash'})
if bad then return bad end

if redis.call('ZSCORE', KEYS[1], ARGV[3]) then
  return {0, 0}
end
local now = nowMs()
redis.call('ZADD', KEYS[1], string.format('%d', now), ARGV[3])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[5])
return {1, trimFailed(KEYS[1], KEYS[2], KEYS[3], now, tonumber(ARGV[1]), tonumber(ARGV[2]), KEYS[4], KEYS[5])}
