-- schedule_tick: claim one tick of a schedule entry and push its job, in
-- one call, so that a tick is dispatched once however many schedule
-- processes try it.
--
-- KEYS[1] -> the entry's state hash (tick, id, at; skipped_at when the
--            last tick pushed nothing, with skipped_by when it found the
--            entry still running; paused while the entry is paused)
-- KEYS[2] -> ready list of the job's queue
-- KEYS[3] -> delayed zset of the job's queue
-- KEYS[4] -> payloads hash of the job's queue
-- KEYS[5] -> notify list (doorbell) of the job's queue
-- KEYS[6] -> (only for an entry without overlapping) its lock string,
--            which holds the ID of the job of its last run
-- ARGV[1] -> the tick, unix ms: with the entry, its identity
-- ARGV[2] -> unix ms before which a tick of an entry with no state is
--            not claimed (when the process started)
-- ARGV[3] -> how long to keep the state after this call, in ms
-- ARGV[4] -> job ID
-- ARGV[5] -> encoded envelope
-- ARGV[6] -> delay before the job is ready, in ms (0: ready now)
-- ARGV[7] -> lifetime of the lock, in ms (with KEYS[6])
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

-- uses: wrong_type, now_ms
local kinds = {1, 'hash', 2, 'list', 3, 'zset', 4, 'hash', 5, 'list'}
if #KEYS >= 6 then kinds[11], kinds[12] = 6, 'string' end
local bad = wrongType(kinds)
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
local id = ARGV[4]
if redis.call('HEXISTS', KEYS[4], id) == 1 then
  return redis.error_reply('DUPLICATE ' .. id)
end

local now = nowMs()
local keep = tonumber(ARGV[3])

if #KEYS >= 6 then
  local holder = redis.call('GET', KEYS[6])
  if holder and holder ~= id then
    redis.call('HSET', KEYS[1], 'tick', ticks, 'skipped_by', holder, 'skipped_at', string.format('%d', now))
    redis.call('PEXPIRE', KEYS[1], keep)
    return {2, holder}
  end
end

redis.call('HSET', KEYS[1], 'tick', ticks, 'id', id, 'at', string.format('%d', now))
redis.call('HDEL', KEYS[1], 'skipped_by', 'skipped_at')
redis.call('PEXPIRE', KEYS[1], keep)
if #KEYS >= 6 then
  redis.call('SET', KEYS[6], id, 'PX', tonumber(ARGV[7]))
end
redis.call('HSET', KEYS[4], id, ARGV[5])
local delay = tonumber(ARGV[6])
if delay > 0 then
  -- Rounded up, as in later.lua, so the job never falls due early.
  local due = nowMsUp() + delay
  redis.call('ZADD', KEYS[3], string.format('%d', due), id)
  if redis.call('LLEN', KEYS[5]) == 0 then redis.call('RPUSH', KEYS[5], '1') end
else
  redis.call('RPUSH', KEYS[2], id)
  if redis.call('LLEN', KEYS[5]) == 0 then redis.call('RPUSH', KEYS[5], '1') end
end
return {1, id}
