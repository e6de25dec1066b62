#!lua flags=allow-oom
-- migrate: move due delayed jobs and expired reservations back to ready.
--
-- KEYS[1] -> ready list
-- KEYS[2] -> delayed zset
-- KEYS[3] -> reserved zset
-- KEYS[4] -> state hash (job ID -> "attempts:exceptions:token")
-- KEYS[5] -> notify list (doorbell)
-- ARGV[1] -> limit: at most this many jobs of each kind move per call
--
-- Returns: {now ms, delayed jobs moved, expired jobs moved,
--           next due ms or -1, next lease deadline ms or -1,
--           µs past now ms}: now, to the µs, is now ms plus the last.
--
-- An expired job's token is cleared, so the worker that held it can no
-- longer ack, release, extend or fail it. Its counts are kept.
--
-- allow-oom: it takes no new memory. Jobs move from the delayed and
-- reserved sets to the ready list, and expired ones lose their token.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local us = tonumber(t[2]) % 1000
local limit = tonumber(ARGV[1])

local function head(key)
  local h = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if h[2] == nil then return -1 end
  return tonumber(h[2])
end

-- Moves the members of from due by now, up to limit, and returns how
-- many moved and the score of from's head after (-1 if empty). The head
-- is read first: most calls find nothing due, and end with that one read.
local function move(from, drop_tokens)
  local first = head(from)
  if first == -1 or first > now then return 0, first end
  local ids = redis.call('ZRANGEBYSCORE', from, '-inf', now, 'LIMIT', 0, limit)
  for s = 1, #ids, 1000 do
    local e = math.min(s + 999, #ids)
    redis.call('ZREM', from, unpack(ids, s, e))
    if drop_tokens then
      local states = redis.call('HMGET', KEYS[4], unpack(ids, s, e))
      local sargs = {}
      for i = s, e do
        local st = states[i - s + 1]
        if st then
          sargs[#sargs + 1] = ids[i]
          sargs[#sargs + 1] = string.match(st, '^(%d+:%d+:)')
        end
      end
      for z = 1, #sargs, 1000 do
        redis.call('HSET', KEYS[4], unpack(sargs, z, math.min(z + 999, #sargs)))
      end
    end
    redis.call('RPUSH', KEYS[1], unpack(ids, s, e))
  end
  return #ids, head(from)
end

local delayed, next_due = move(KEYS[2], false)
local expired, next_expiry = move(KEYS[3], true)
if delayed + expired > 0 and redis.call('LLEN', KEYS[5]) == 0 then
  redis.call('RPUSH', KEYS[5], '1')
end

return {now, delayed, expired, next_due, next_expiry, us}
