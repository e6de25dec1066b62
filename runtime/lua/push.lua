-- push: add jobs to the back of a queue's ready list and ring its doorbell.
--
-- KEYS[1] -> ready list
-- KEYS[2] -> payloads hash
-- KEYS[3] -> notify list (doorbell)
-- ARGV[1..] -> pairs: job ID, encoded envelope
--
-- Returns: the number of jobs pushed.
-- Errors: "DUPLICATE <id>" if a job ID exists already; nothing is pushed.

local n = #ARGV / 2
for i = 1, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[2], ARGV[i]) == 1 then
    return redis.error_reply('DUPLICATE ' .. ARGV[i])
  end
end

-- At most 1000 values per call (500 pairs), so unpack never overflows.
for s = 1, #ARGV, 1000 do
  local e = math.min(s + 999, #ARGV)
  redis.call('HSET', KEYS[2], unpack(ARGV, s, e))
  local ids = {}
  for i = s, e, 2 do ids[#ids + 1] = ARGV[i] end
  redis.call('RPUSH', KEYS[1], unpack(ids))
end

if redis.call('LLEN', KEYS[3]) == 0 then
  redis.call('RPUSH', KEYS[3], '1')
end
return n
