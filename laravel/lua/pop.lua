-- pop: Laravel's RedisQueue::pop, reserve the first ready job.
--
-- KEYS[1] -> queues:NAME list (ready jobs)
-- KEYS[2] -> queues:NAME:reserved zset (reserved payload -> unix seconds its lease ends)
-- KEYS[3] -> queues:NAME:notify list
-- ARGV[1] -> retry_after, whole seconds (>= 1)
--
-- Returns: {} if the queue is empty; else {job, reserved, ok}: the payload
-- as pushed, the payload as reserved, and 1 if it decoded. A decoded
-- payload is reserved as Laravel reserves it: decoded and encoded again
-- with cjson, its attempts one more. cjson may order keys anew and write
-- an empty array [] as {}; the reserved string is the key to delete or
-- release the job, so callers keep it byte for byte. A payload that is
-- not a JSON object with numeric attempts is reserved as it is, with
-- ok 0, for the caller to fail: Laravel's own script would throw after
-- its LPOP and lose the job.
--
-- The checks come before the first write: the payload is read with LINDEX
-- and decoded before the LPOP.

-- uses: wrong_type
-- A key of another type would fail a write after others were made: the
-- keys are checked before the first write.
local bad = wrongType({1, 'list', 2, 'zset', 3, 'list'})
if bad then return bad end

local retry = tonumber(ARGV[1])
if not retry or retry < 1 then
  return redis.error_reply('pop: bad retry_after')
end
local job = redis.call('LINDEX', KEYS[1], 0)
if not job then
  return {}
end
local reserved, ok = job, 0
local decoded, payload = pcall(cjson.decode, job)
if decoded and type(payload) == 'table' and type(payload['attempts']) == 'number' then
  payload['attempts'] = payload['attempts'] + 1
  reserved, ok = cjson.encode(payload), 1
end
local now = tonumber(redis.call('TIME')[1])
redis.call('LPOP', KEYS[1])
redis.call('ZADD', KEYS[2], now + retry, reserved)
redis.call('LPOP', KEYS[3])
return {job, reserved, ok}
