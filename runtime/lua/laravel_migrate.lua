-- laravel_migrate: Laravel's RedisQueue::migrate, which a worker runs before each
-- pop: delayed jobs that are due, and reservations whose retry_after has
-- run out, go back to the end of the ready list.
--
-- KEYS[1] -> queues:NAME:delayed zset (payload -> unix seconds it is due)
-- KEYS[2] -> queues:NAME:reserved zset (reserved payload -> unix seconds its lease ends)
-- KEYS[3] -> queues:NAME list (ready jobs)
-- KEYS[4] -> queues:NAME:notify list
-- ARGV[1] -> most jobs to move from each zset (1 to 1000)
--
-- Returns: {jobs moved from delayed, jobs moved from reserved}.
--
-- Scores are integer unix seconds by the Redis clock. A job moves when
-- its score is at most now, as in Laravel.

-- uses: wrong_type
-- A key of another type would fail a write after others were made: the
-- keys are checked before the first write.
local bad = wrongType({1, 'zset', 2, 'zset', 3, 'list', 4, 'list'})
if bad then return bad end

local limit = tonumber(ARGV[1])
if not limit or limit < 1 or limit > 1000 then
  return redis.error_reply('laravel_migrate: limit must be 1 to 1000')
end
local now = tonumber(redis.call('TIME')[1])
local moved = {}
for k = 1, 2 do
  local val = redis.call('ZRANGEBYSCORE', KEYS[k], '-inf', now, 'LIMIT', 0, limit)
  if #val > 0 then
    redis.call('ZREMRANGEBYRANK', KEYS[k], 0, #val - 1)
    for i = 1, #val, 100 do
      local j = math.min(i + 99, #val)
      redis.call('RPUSH', KEYS[3], unpack(val, i, j))
      for _ = i, j do
        redis.call('RPUSH', KEYS[4], 1)
      end
    end
  end
  moved[k] = #val
end
return moved
