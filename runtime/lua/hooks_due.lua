-- hooks_due: record that a job about to be failed has hooks to run
-- (its batch, its chain's catch, its failed hook, its unique lock), or
-- renew that record while they run.
--
-- KEYS[1] -> hooks zset ("job ID token" -> Redis ms)
-- ARGV[1] -> "job ID token" of the reservation being failed
-- ARGV[2] -> "XX" to renew only a record that exists (the heartbeat of a
--            worker running the hooks); "" to record
--
-- Errors: "WRONGTYPE <key> ..." if its key holds another type; it writes
-- nothing then.
--
-- Returns: the Redis time it recorded, in ms.

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
if ARGV[2] == 'XX' then
  redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
else
  redis.call('ZADD', KEYS[1], now, ARGV[1])
end
return now
