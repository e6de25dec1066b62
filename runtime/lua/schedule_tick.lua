-- schedule_tick: claim one tick of a schedule entry and push its job, in
-- one call, so that a tick is dispatched once however many schedule
-- processes try it.
--
-- KEYS[1] -> the entry's state hash (tick, id, at; skipped_at when the
--            last tick pushed nothing, with skipped_by when it found the
--            entry still running; paused while the entry is paused)
-- KEYS[2] -> (only for an entry without overlapping, ARGV[5] "1") its
--            lock string, which holds the ID of the job of its last run
-- KEYS[2 or 3..] -> the job's queue's keys, as lib/enqueue.lua takes them
-- ARGV[1] -> the tick, unix ms: with the entry, its identity
-- ARGV[2] -> unix ms before which a tick of an entry with no state is
--            not claimed (when the process started)
-- ARGV[3] -> how long to keep the state after this call, in ms
-- ARGV[4] -> lifetime of the lock, in ms (with the lock)
-- ARGV[5] -> "1" if KEYS[2] is the lock, "0" if there is none
-- ARGV[6..] -> the job, as lib/enqueue.lua takes its jobs (one job)
--
-- Returns: {1, job ID} if the tick was claimed and the job pushed;
--          {0, ID of the job of the last claimed tick} if this tick, or
--          a later one, was claimed already;
--          {2, holder} if the tick was claimed but nothing pushed, as
--          the lock is held by the job of an earlier run;
--          {3, ""} if the tick was claimed but nothing pushed, as the
--          entry is paused (its state then keeps no expiry, as
--          schedule_pause left it);
--          {-1, ""} if the entry has no state and the tick is before
--          ARGV[2].
-- Errors: "DUPLICATE <id>" if the job ID exists already, and
-- "WRONGTYPE <key> ..." if a key holds another type; nothing is written
-- then.
--
-- A call that the Redis client sends again after its reply was lost
-- finds its tick claimed and returns {0, ...}.

-- uses: wrong_type, now_ms, groups, enqueue

local locked = ARGV[5] == '1'
local Q, bad = enqueueOpen(locked and 3 or 2, 6)
if not Q then return bad end
if Q.n ~= 1 then
  return redis.error_reply('ERR schedule_tick: want one job, got ' .. Q.n .. '; nothing was written')
end
bad = wrongType(locked and {1, 'hash', 2, 'string'} or {1, 'hash'})
if bad then return bad end
local tick = tonumber(ARGV[1])
local last = redis.call('HGET', KEYS[1], 'tick')
if last then
  if tonumber(last) >= tick then
    return {0, redis.call('HGET', KEYS[1], 'id') or ''}
  end
elseif tick < tonumber(ARGV[2]) then
  return {-1, ''}
end
local ticks = string.format('%d', tick)
if redis.call('HEXISTS', KEYS[1], 'paused') == 1 then
  redis.call('HSET', KEYS[1], 'tick', ticks, 'skipped_at', string.format('%d', nowMs()))
  redis.call('HDEL', KEYS[1], 'skipped_by')
  return {3, ''}
end
local id = enqueueJob(Q, 1)
if redis.call('HEXISTS', KEYS[Q.b + 2], id) == 1 then
  return redis.error_reply('DUPLICATE ' .. id)
end
local now = nowMs()
local keep = tonumber(ARGV[3])
if locked then
  local holder = redis.call('GET', KEYS[2])
  if holder and holder ~= id then
    redis.call('HSET', KEYS[1], 'tick', ticks, 'skipped_by', holder, 'skipped_at', string.format('%d', now))
    redis.call('PEXPIRE', KEYS[1], keep)
    return {2, holder}
  end
end
redis.call('HSET', KEYS[1], 'tick', ticks, 'id', id, 'at', string.format('%d', now))
redis.call('HDEL', KEYS[1], 'skipped_by', 'skipped_at')
redis.call('PEXPIRE', KEYS[1], keep)
if locked then
  redis.call('SET', KEYS[2], id, 'PX', tonumber(ARGV[4]))
end
enqueueWrite(Q, nil)
return {1, id}
