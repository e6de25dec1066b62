-- cancel: cancel one job, waiting (ready or delayed) or running, if it
-- is still at the attempt the caller saw: take it out of its queue and
-- record it in the failed store as cancelled, with its hooks (batch,
-- chain catch, failed hook, unique lock) due at once for a worker's
-- sweep to run (hooks.go).
--
-- KEYS[1] -> ready list
-- KEYS[2] -> delayed zset
-- KEYS[3] -> reserved zset
-- KEYS[4] -> state hash (job ID -> "attempts:exceptions:token")
-- KEYS[5] -> payloads hash
-- KEYS[6] -> failed zset
-- KEYS[7] -> failed payloads hash
-- KEYS[8] -> failed info hash
-- KEYS[9] -> hooks zset ("job ID token" -> Redis ms)
-- KEYS[10] -> errors hash (job ID -> its last attempts' errors,
--             lib/attempt_errors.lua)
-- KEYS[11] -> failed errors hash: the job's entry moves here
-- KEYS[12] -> progress hash (job ID -> how far it got): its entry goes
-- KEYS[13..18] -> the group keys (optional; lib/groups.lua): of, wait,
--            ring, active, seq, running. A running job of a group frees
--            its slot; a waiting one is dropped from its group when
--            reserve comes to it (its payload is gone).
-- KEYS[19] -> notify list (doorbell), with the group keys
-- KEYS[#KEYS] -> failed trimmed hash (the last key, after KEYS[12] or
--            KEYS[19]): what trimming dropped (lib/failed_trim.lua)
-- ARGV[1] -> most failed jobs to keep (0: no limit)
-- ARGV[2] -> oldest failed job to keep, in ms of age (0: no limit)
-- ARGV[3] -> job ID
-- ARGV[4] -> the attempt count the caller saw (the state's first field;
--            0 for a job never reserved)
-- ARGV[5] -> encoded failure info, marked cancelled
-- ARGV[6] -> the token the failure info names, for the hooks entry
--
-- Returns: {outcome, attempts, trimmed}: outcome 1 if a ready job was cancelled,
-- 3 if a delayed one was, 2 if a reserved (running) one was, 0 if the queue holds no such job
-- (it finished, was cleared, or never was there), -1 if it is in the
-- failed store already, -2 if its attempt count is not the one seen
-- (it was reserved again since): nothing changes then. attempts is the
-- job's count as found (0 when not found); trimmed is how many old
-- failed entries trimming dropped.
--
-- A running job's worker finds its state gone and the job in the failed
-- store at its next heartbeat (extend.lua), and cancels the job's
-- context; its ack, release or fail is refused, as for a lost lease.
--
-- The ready list is searched with LREM: O(length of the list), an
-- operator's call, not a worker's.
--
-- Not allow-oom: the failure info it stores is new memory.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type, now_ms, failed_trim

local T = #KEYS
local bad = wrongType({1, 'list', 2, 'zset', 3, 'zset', 4, 'hash', 5, 'hash', 6, 'zset', 7, 'hash', 8, 'hash', 9, 'zset', 10, 'hash', 11, 'hash', 12, 'hash', T, 'hash'})
if bad then return bad end
-- uses: groups
local G = KEYS[19] and {of = 13, wait = 14, ring = 15, active = 16, seq = 17, running = 18, reserved = 3}
bad = G and (groupsLoad().bad(G) or wrongType({19, 'list'}))
if bad then return bad end

local id = ARGV[3]
local p = redis.call('HGET', KEYS[5], id)
if not p then
  if redis.call('ZSCORE', KEYS[6], id) then return {-1, 0} end
  return {0, 0}
end
local st = redis.call('HGET', KEYS[4], id)
local a = 0
if st then a = tonumber(string.match(st, '^(%d+):%d+:') or '-1') end
if a ~= tonumber(ARGV[4]) then return {-2, a} end

local outcome = 1
if redis.call('ZREM', KEYS[3], id) == 1 then
  outcome = 2
elseif redis.call('ZREM', KEYS[2], id) == 1 then
  outcome = 3
else
  redis.call('LREM', KEYS[1], 1, id)
end
redis.call('HDEL', KEYS[4], id)
redis.call('HDEL', KEYS[5], id)
redis.call('HDEL', KEYS[12], id)
local now = nowMs()
redis.call('ZADD', KEYS[6], string.format('%d', now), id)
redis.call('HSET', KEYS[7], id, p)
redis.call('HSET', KEYS[8], id, ARGV[5])
local errs = redis.call('HGET', KEYS[10], id)
if errs then
  redis.call('HDEL', KEYS[10], id)
  redis.call('HSET', KEYS[11], id, errs)
end
-- Due at once: the canceller runs no hooks, a worker's sweep does.
redis.call('ZADD', KEYS[9], 0, id .. ' ' .. ARGV[6])
local trimmed = trimFailed(KEYS[6], KEYS[7], KEYS[8], now, tonumber(ARGV[1]), tonumber(ARGV[2]), KEYS[11], KEYS[T])
if G and outcome == 2 and groupsLoad().free(G, {id}, false) > 0 and redis.call('LLEN', KEYS[19]) == 0 then
  redis.call('RPUSH', KEYS[19], '1')
end
return {outcome, a, trimmed}
