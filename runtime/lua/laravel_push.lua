-- laravel_push: Laravel's RedisQueue::push, a job ready now.
--
-- KEYS[1] -> queues:NAME list (ready jobs, oldest first)
-- KEYS[2] -> queues:NAME:notify list (one entry per ready job, for block_for)
-- ARGV[1..] -> payloads, Laravel's JSON (at most 1000)
--
-- Returns: the length of the queue after the push.
--
-- The same writes as Laravel's own push script, so Laravel's workers
-- and jobgen's take these jobs alike.

-- uses: wrong_type
-- A key of another type would fail a write after others were made: the
-- keys are checked before the first write.
local bad = wrongType({1, 'list', 2, 'list'})
if bad then return bad end

local n = 0
for i = 1, #ARGV do
  n = redis.call('RPUSH', KEYS[1], ARGV[i])
  redis.call('RPUSH', KEYS[2], 1)
end
return n
