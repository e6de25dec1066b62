-- schedule_pause: pause or resume a schedule entry, for every process
-- that runs the schedule: while its state hash holds paused, its ticks
-- are claimed and push nothing (schedule_tick).
--
-- KEYS[1] -> the entry's state hash (see schedule_tick)
-- ARGV[1] -> 1 to pause, 0 to resume
-- ARGV[2] -> on resume, how long to keep the state from now, in ms, as
--            schedule_tick would after a tick
--
-- A paused entry's state keeps no expiry, so a pause outlasts any time
-- with no schedule process running; a resume gives it its expiry back.
--
-- Returns: 1 if the entry was changed, 0 if it was paused (resumed)
-- already.
-- Errors: "WRONGTYPE <key> ..." if KEYS[1] holds another type, and
-- "schedule_pause: bad keep" on a resume whose ARGV[2] is not a whole
-- number of ms of at least 1; nothing is written then.

-- uses: wrong_type
local bad = wrongType({1, 'hash'})
if bad then return bad end
local keep = tonumber(ARGV[2])
if ARGV[1] ~= '1' and (not keep or keep < 1 or keep % 1 ~= 0) then
  return redis.error_reply('schedule_pause: bad keep ' .. tostring(ARGV[2]) .. '; nothing was written')
end

local paused = redis.call('HEXISTS', KEYS[1], 'paused') == 1
if ARGV[1] == '1' then
  if paused then return 0 end
  redis.call('HSET', KEYS[1], 'paused', '1')
  redis.call('PERSIST', KEYS[1])
  return 1
end
if not paused then return 0 end
redis.call('HDEL', KEYS[1], 'paused')
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], keep)
end
return 1
