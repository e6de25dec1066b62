-- hooks_claim: claim the hooks of failed jobs whose worker did not record
-- them as run within a given age (it died, or lost Redis, in between).
--
-- KEYS[1] -> hooks zset ("job ID token" -> Redis ms)
-- ARGV[1] -> age in ms: entries recorded at least this long ago are due
-- ARGV[2] -> most entries to claim (at most 500)
--
-- Errors: "WRONGTYPE <key> ..." if its key holds another type; it writes
-- nothing then.
--
-- Returns: the claimed entries. Each is re-scored to now, so that no
-- other worker claims it again until it is as old again.

-- uses: wrong_type

local bad = wrongType({1, 'zset'})
if bad then return bad end

-- uses: now_ms
local now = nowMs()
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]), 'LIMIT', 0, tonumber(ARGV[2]))
if #due == 0 then return due end
local args, n = {}, 0
for _, m in ipairs(due) do
  args[n + 1], args[n + 2] = now, m
  n = n + 2
end
redis.call('ZADD', KEYS[1], 'XX', unpack(args))
return due
