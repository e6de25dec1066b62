-- release: put reserved jobs back, ready now or after a delay.
--
-- KEYS[1] -> ready list
-- KEYS[2] -> delayed zset
-- KEYS[3] -> reserved zset
-- KEYS[4] -> tokens hash
-- KEYS[5] -> exceptions hash
-- KEYS[6] -> notify list (doorbell)
-- ARGV[1] -> delay in ms (0: back of the ready list now)
-- ARGV[2] -> 1 if the release follows an exception (counted), else 0
-- ARGV[3..] -> pairs: job ID, reservation token (at most 1000 pairs)
--
-- Returns: per pair, 1 if released or 0 if the token is stale. A stale
-- pair changes nothing. The attempt count is kept.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local delay = tonumber(ARGV[1])

local ids = {}
for i = 3, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
local current = redis.call('HMGET', KEYS[4], unpack(ids))

local out, done = {}, {}
for j = 1, #ids do
  if current[j] == ARGV[2 * j + 2] then
    done[#done + 1] = ids[j]
    out[j] = 1
  else
    out[j] = 0
  end
end
if #done == 0 then return out end

redis.call('ZREM', KEYS[3], unpack(done))
redis.call('HDEL', KEYS[4], unpack(done))
if ARGV[2] == '1' then
  for _, id in ipairs(done) do redis.call('HINCRBY', KEYS[5], id, 1) end
end
local ring = true
if delay > 0 then
  local head = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  local due = now + delay
  ring = head[2] == nil or due < tonumber(head[2])
  local dues = string.format('%d', due)
  local zargs = {}
  for _, id in ipairs(done) do
    zargs[#zargs + 1] = dues
    zargs[#zargs + 1] = id
  end
  redis.call('ZADD', KEYS[2], unpack(zargs))
else
  redis.call('RPUSH', KEYS[1], unpack(done))
end
if ring and redis.call('LLEN', KEYS[6]) == 0 then
  redis.call('RPUSH', KEYS[6], '1')
end
return out
