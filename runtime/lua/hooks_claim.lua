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

-- wrongType returns an error reply naming the first of kinds (pairs:
-- index into KEYS, type) whose key holds another type, if any. A missing
-- key is of every type.
local function wrongType(kinds)
  for i = 1, #kinds, 2 do
    local key, want = KEYS[kinds[i]], kinds[i + 1]
    local got = redis.call('TYPE', key).ok
    if got ~= want and got ~= 'none' then
      return redis.error_reply('WRONGTYPE ' .. key .. ' holds a ' .. got .. ', not a ' .. want .. '; nothing was written')
    end
  end
end

local bad = wrongType({1, 'zset'})
if bad then return bad end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]), 'LIMIT', 0, tonumber(ARGV[2]))
if #due == 0 then return due end
local args, n = {}, 0
for _, m in ipairs(due) do
  args[n + 1], args[n + 2] = now, m
  n = n + 2
end
redis.call('ZADD', KEYS[1], 'XX', unpack(args))
return due
