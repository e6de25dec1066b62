-- laravel_pop: Laravel's RedisQueue::pop, reserve the first ready job, if it is
-- one of the jobs the caller expects.
--
-- KEYS[1] -> queues:NAME list (ready jobs)
-- KEYS[2] -> queues:NAME:reserved zset (reserved payload -> unix seconds its lease ends)
-- KEYS[3] -> queues:NAME:notify list
-- ARGV[1] -> retry_after, whole seconds (>= 1)
-- ARGV[2], ARGV[3], ... -> pairs: a job the caller expects first, byte
--   for byte, then the payload to reserve it as. None: look only.
--
-- Returns: {} if the queue is empty. {'moved', job, ...}, the first 8
-- jobs, if none of the pairs' jobs is first; nothing changes, and the
-- caller tries again with those. {'reserved', i} or {'reserved', i, next}
-- when the job of pair i (from 1) was first: it is popped, and that
-- pair's payload is added to the reserved set until now + retry_after
-- (Redis clock, seconds, as Laravel); next is the new first job, to
-- expect on the next call.
--
-- The payloads are opaque here. The caller builds each pair's reserved
-- payload from its job (the job with its attempts one more, or the job
-- as it is when that cannot be done), so a first job byte-equal to a
-- pair's is the right one to reserve so, whoever pushed it. Other
-- workers only pop from the front, so a caller that is a few pops behind
-- still finds the first job among the next few it was sent. The checks
-- come before the first write.

-- uses: wrong_type
-- A key of another type would fail a write after others were made: the
-- keys are checked before the first write.
local bad = wrongType({1, 'list', 2, 'zset', 3, 'list'})
if bad then return bad end

local retry = tonumber(ARGV[1])
if not retry or retry < 1 then
  return redis.error_reply('laravel_pop: bad retry_after')
end
if #ARGV % 2 ~= 1 then
  return redis.error_reply('laravel_pop: want retry_after, then pairs of an expected job and its reserved payload')
end
local job = redis.call('LINDEX', KEYS[1], 0)
if not job then
  return {}
end
for i = 2, #ARGV, 2 do
  if ARGV[i] == job then
    local now = tonumber(redis.call('TIME')[1])
    redis.call('LPOP', KEYS[1])
    redis.call('ZADD', KEYS[2], now + retry, ARGV[i + 1])
    redis.call('LPOP', KEYS[3])
    local next = redis.call('LINDEX', KEYS[1], 0)
    if next then
      return {'reserved', i / 2, next}
    end
    return {'reserved', i / 2}
  end
end
local first = redis.call('LRANGE', KEYS[1], 0, 7)
table.insert(first, 1, 'moved')
return first
