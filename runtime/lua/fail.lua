-- fail: move reserved jobs into the failed store, then keep the store
-- within its bounds.
--
-- KEYS[1] -> reserved zset
-- KEYS[2] -> tokens hash
-- KEYS[3] -> payloads hash
-- KEYS[4] -> attempts hash
-- KEYS[5] -> exceptions hash
-- KEYS[6] -> failed zset
-- KEYS[7] -> failed payloads hash
-- KEYS[8] -> failed info hash
-- ARGV[1] -> most failed jobs to keep (0: no limit)
-- ARGV[2] -> oldest failed job to keep, in ms of age (0: no limit)
-- ARGV[3..] -> triples: job ID, reservation token, encoded failure info
--              (at most 300 triples)
--
-- Returns: per triple, 1 if failed or 0 if the token is stale. A stale
-- triple changes nothing. At most 1000 old entries are trimmed per call.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nows = string.format('%d', now)

local ids = {}
for i = 3, #ARGV, 3 do ids[#ids + 1] = ARGV[i] end
local current = redis.call('HMGET', KEYS[2], unpack(ids))

local out = {}
for j = 1, #ids do
  local id = ids[j]
  if current[j] == ARGV[3 * j + 1] then
    local p = redis.call('HGET', KEYS[3], id)
    redis.call('ZREM', KEYS[1], id)
    for k = 2, 5 do redis.call('HDEL', KEYS[k], id) end
    redis.call('ZADD', KEYS[6], nows, id)
    redis.call('HSET', KEYS[7], id, p or '')
    redis.call('HSET', KEYS[8], id, ARGV[3 * j + 2])
    out[j] = 1
  else
    out[j] = 0
  end
end

local function drop(old)
  if #old == 0 then return end
  redis.call('ZREM', KEYS[6], unpack(old))
  redis.call('HDEL', KEYS[7], unpack(old))
  redis.call('HDEL', KEYS[8], unpack(old))
end
local max_age = tonumber(ARGV[2])
if max_age > 0 then
  drop(redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', '(' .. string.format('%d', now - max_age), 'LIMIT', 0, 1000))
end
local max_count = tonumber(ARGV[1])
if max_count > 0 then
  local over = redis.call('ZCARD', KEYS[6]) - max_count
  if over > 0 then
    drop(redis.call('ZRANGE', KEYS[6], 0, math.min(over, 1000) - 1))
  end
end
return out
