-- sizes: count a queue's jobs by state, in one snapshot.
--
-- KEYS[1] -> ready list
-- KEYS[2] -> delayed zset
-- KEYS[3] -> reserved zset
-- KEYS[4] -> failed zset
-- KEYS[5] -> paused string (optional)
-- KEYS[6] -> group wait zset (optional, with KEYS[5]): its jobs are
--            ready too (lib/groups.lua)
--
-- Returns: {ready, delayed, reserved, failed}, and with KEYS[5] a fifth
-- value, 1 if the queue is paused and 0 if not, and with KEYS[6] a
-- sixth, how many of the ready jobs wait in fair groups.
--
-- A script, so a job moving between states meanwhile is counted once: a
-- pipeline of the four reads lets a release or a migrate slip between
-- them. It only reads, so it runs even when Redis is past maxmemory.

local out = {
  redis.call('LLEN', KEYS[1]),
  redis.call('ZCARD', KEYS[2]),
  redis.call('ZCARD', KEYS[3]),
  redis.call('ZCARD', KEYS[4]),
}
local grouped = 0
if KEYS[6] then
  grouped = redis.call('ZCARD', KEYS[6])
  out[1] = out[1] + grouped
end
if KEYS[5] then
  out[5] = redis.call('EXISTS', KEYS[5])
end
if KEYS[6] then
  out[6] = grouped
end
return out
