-- later: add jobs to a queue's delayed set, due after a delay.
--
-- KEYS[1] -> delayed zset
-- KEYS[2] -> payloads hash
-- KEYS[3] -> notify list (doorbell)
-- ARGV[1] -> delay in ms
-- ARGV[2..] -> pairs: job ID, encoded envelope
--
-- Returns: the number of jobs added.
-- Errors: "DUPLICATE <id>" if a job ID exists already; nothing is added.
--
-- The doorbell rings when the new jobs fall due before every job already
-- delayed, so a waiting worker shortens its wait.

local t = redis.call('TIME')
local due = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])

for i = 2, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[2], ARGV[i]) == 1 then
    return redis.error_reply('DUPLICATE ' .. ARGV[i])
  end
end

local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local dues = string.format('%d', due)
for s = 2, #ARGV, 1000 do
  local e = math.min(s + 999, #ARGV)
  redis.call('HSET', KEYS[2], unpack(ARGV, s, e))
  local members = {}
  for i = s, e, 2 do
    members[#members + 1] = dues
    members[#members + 1] = ARGV[i]
  end
  redis.call('ZADD', KEYS[1], unpack(members))
end

if (head[2] == nil or due < tonumber(head[2])) and redis.call('LLEN', KEYS[3]) == 0 then
  redis.call('RPUSH', KEYS[3], '1')
end
return (#ARGV - 1) / 2
