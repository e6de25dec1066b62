-- ack: delete finished jobs (also used to delete a job from its handler).
--
-- KEYS[1] -> reserved zset
-- KEYS[2] -> tokens hash
-- KEYS[3] -> payloads hash
-- KEYS[4] -> attempts hash
-- KEYS[5] -> exceptions hash
-- ARGV[1..] -> pairs: job ID, reservation token (at most 1000 pairs)
--
-- Returns: per pair, 1 if deleted or 0 if the token is stale. A stale pair
-- changes nothing.

local ids = {}
for i = 1, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
local current = redis.call('HMGET', KEYS[2], unpack(ids))

local out, done = {}, {}
for j = 1, #ids do
  if current[j] == ARGV[2 * j] then
    done[#done + 1] = ids[j]
    out[j] = 1
  else
    out[j] = 0
  end
end
if #done > 0 then
  redis.call('ZREM', KEYS[1], unpack(done))
  for k = 2, 5 do redis.call('HDEL', KEYS[k], unpack(done)) end
end
return out
