-- push: add jobs to the back of a queue's ready list and ring its doorbell.
--
-- KEYS[1] -> ready list
-- KEYS[2] -> payloads hash
-- KEYS[3] -> notify list (doorbell)
-- ARGV[1..] -> pairs: job ID, encoded envelope
--
-- Returns: the number of jobs pushed.
-- Errors: "DUPLICATE <id>" if a job ID exists already with another
-- payload; nothing is pushed then. A job that exists with the same
-- payload is skipped: that is this very push, retried by the client.

-- Pairs are read 500 at a time, so unpack never passes 1000 values.
local chunks = {}
for s = 1, #ARGV, 1000 do
  local ids = {}
  for i = s, math.min(s + 999, #ARGV), 2 do ids[#ids + 1] = ARGV[i] end
  local found = redis.call('HMGET', KEYS[2], unpack(ids))
  local args, fresh = {}, {}
  for j = 1, #ids do
    local payload = ARGV[s + 2 * j - 1]
    if not found[j] then
      args[#args + 1] = ids[j]
      args[#args + 1] = payload
      fresh[#fresh + 1] = ids[j]
    elseif found[j] ~= payload then
      return redis.error_reply('DUPLICATE ' .. ids[j])
    end
  end
  chunks[#chunks + 1] = {args, fresh}
end

local n = 0
for _, c in ipairs(chunks) do
  if #c[2] > 0 then
    redis.call('HSET', KEYS[2], unpack(c[1]))
    redis.call('RPUSH', KEYS[1], unpack(c[2]))
    n = n + #c[2]
  end
end
if n > 0 and redis.call('LLEN', KEYS[3]) == 0 then
  redis.call('RPUSH', KEYS[3], '1')
end
return n
