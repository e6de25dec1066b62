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
-- longer ack, release, extend or fail it. Its counts are kept. A job
-- whose state entry is malformed (not "attempts:exceptions:token") moves
-- with its entry as it is: the reserve that takes it hands it to its
-- worker to fail (reserve.lua). One bad entry holds up no other job.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then. The
-- sets are checked at once, the other keys only when a job is due.
--
-- allow-oom: it takes no new memory. Jobs move from the delayed and
-- reserved sets to the ready list, and expired ones lose their token.

-- uses: wrong_type

-- uses: now_ms
local now, us = nowMs()
local limit = tonumber(ARGV[1])

local function head(key)
  local h = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if h[2] == nil then return -1 end
  return tonumber(h[2])
end

local bad = wrongType({2, 'zset', 3, 'zset'})
if bad then return bad end
-- Most calls find nothing due, and end with the two reads of the heads.
local due_head, expiry_head = head(KEYS[2]), head(KEYS[3])
local function due(first) return first ~= -1 and first <= now end
if not due(due_head) and not due(expiry_head) then
  return {now, 0, 0, due_head, expiry_head, us}
end
bad = wrongType({1, 'list', 4, 'hash', 5, 'list'})
if bad then return bad end

-- Moves the members of from due by now, up to limit, and returns how
-- many moved and the score of from's head after (-1 if empty). first is
-- the score of its head before.
local function move(from, first, drop_tokens)
  if not due(first) then return 0, first end
  local ids = redis.call('ZRANGEBYSCORE', from, '-inf', now, 'LIMIT', 0, limit)
  for s = 1, #ids, 1000 do
    local e = math.min(s + 999, #ids)
    redis.call('ZREM', from, unpack(ids, s, e))
    if drop_tokens then
      local states = redis.call('HMGET', KEYS[4], unpack(ids, s, e))
      local sargs, n = {}, 0
      for i = s, e do
        local kept = states[i - s + 1] and string.match(states[i - s + 1], '^(%d+:%d+:)')
        if kept then
          sargs[n + 1], sargs[n + 2] = ids[i], kept
          n = n + 2
        end
      end
      for z = 1, n, 1000 do
        redis.call('HSET', KEYS[4], unpack(sargs, z, math.min(z + 999, n)))
      end
    end
    redis.call('RPUSH', KEYS[1], unpack(ids, s, e))
  end
  return #ids, head(from)
end

local delayed, next_due = move(KEYS[2], due_head, false)
local expired, next_expiry = move(KEYS[3], expiry_head, true)
if delayed + expired > 0 and redis.call('LLEN', KEYS[5]) == 0 then
  redis.call('RPUSH', KEYS[5], '1')
end

return {now, delayed, expired, next_due, next_expiry, us}
