-- outbox_release: start the countdown of relayed marks whose outbox rows
-- are deleted (outbox_push.lua). A mark stays for grace ms more, so that
-- a relay that claimed the same row before it and stalled past its lock
-- still finds it, until that relay's deadline has passed.
--
-- KEYS[1] -> relayed zset
-- ARGV[1] -> grace in ms
-- ARGV[2..] -> marks
--
-- Returns: the number of marks whose countdown started. A mark that is
-- not in the set is left out.
-- Errors: "WRONGTYPE <key> ..." if the key holds another type; nothing is
-- written then.

-- uses: wrong_type, now_ms

local bad = typeError(KEYS[1], 'zset')
if bad then return bad end

local expires = string.format('%d', nowMs() + tonumber(ARGV[1]))
local n = 0
for s = 2, #ARGV, 500 do
  local args, k = {}, 0
  for i = s, math.min(s + 499, #ARGV) do
    args[k + 1], args[k + 2] = expires, ARGV[i]
    k = k + 2
  end
  n = n + redis.call('ZADD', KEYS[1], 'XX', 'CH', unpack(args))
end
return n
