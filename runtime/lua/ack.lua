#!lua flags=allow-oom
-- ack: delete finished jobs (also used to delete a job from its handler).
--
-- KEYS[1] -> reserved zset
-- KEYS[2] -> state hash (job ID -> "attempts:exceptions:token")
-- KEYS[3] -> payloads hash
-- KEYS[4] -> errors hash (optional: job ID -> its last attempts' errors,
--            lib/attempt_errors.lua): the jobs acked lose their entries
-- KEYS[5] -> progress hash (optional, given by a worker whose call acks a
--            job that reported progress): every job acked loses its entry
-- KEYS[6..11] -> the group keys (optional, with KEYS[5]; lib/groups.lua):
--            of, wait, ring, active, seq, running; given for a queue that
--            holds grouped jobs. A deleted job leaves its group, and frees
--            its slot if the group has a limit.
-- KEYS[12] -> notify list (doorbell), with the group keys: rung when a
--            group waiting for a slot gets its turn back
-- ARGV[1..] -> pairs: job ID, reservation token (at most 1000 pairs)
--
-- Returns: per pair, 1 if deleted or 0 if the token is stale. A stale pair
-- changes nothing.
--
-- allow-oom: it only deletes, and past maxmemory finishing jobs is what
-- frees memory.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type

local bad = wrongType({1, 'zset', 2, 'hash', 3, 'hash'})
if bad then return bad end
-- uses: groups
local G = KEYS[11] and {of = 6, wait = 7, ring = 8, active = 9, seq = 10, running = 11, reserved = 1}
bad = G and (groupsLoad().bad(G) or wrongType({12, 'list'}))
if bad then return bad end

local ids, n = {}, 0
for i = 1, #ARGV, 2 do
  n = n + 1
  ids[n] = ARGV[i]
end
local states = redis.call('HMGET', KEYS[2], unpack(ids))

local out, done, d = {}, {}, 0
for j = 1, n do
  local st = states[j]
  if st and string.match(st, '^%d+:%d+:(.+)$') == ARGV[2 * j] then
    d = d + 1
    done[d] = ids[j]
    out[j] = 1
  else
    out[j] = 0
  end
end
-- The errors hash exists only while a job of the queue waits for a retry
-- after an error: a queue whose jobs do not fail pays one TYPE a call,
-- and no work per job.
local errs = d > 0 and KEYS[4] and redis.call('TYPE', KEYS[4]).ok
if errs and errs ~= 'none' and errs ~= 'hash' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[4] .. ' holds a ' .. errs .. ', not a hash; nothing was written')
end
if d > 0 and KEYS[5] then
  bad = wrongType({5, 'hash'})
  if bad then return bad end
end
if d > 0 then
  redis.call('ZREM', KEYS[1], unpack(done))
  redis.call('HDEL', KEYS[2], unpack(done))
  redis.call('HDEL', KEYS[3], unpack(done))
  if G and groupsLoad().free(G, done, true) > 0 and redis.call('LLEN', KEYS[12]) == 0 then
    redis.call('RPUSH', KEYS[12], '1')
  end
end
if errs == 'hash' then redis.call('HDEL', KEYS[4], unpack(done)) end
if d > 0 and KEYS[5] then redis.call('HDEL', KEYS[5], unpack(done)) end
return out
