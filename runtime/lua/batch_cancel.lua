-- batch_cancel: cancel a batch; its jobs not yet run are skipped.
--
-- KEYS[1] -> batch state hash
-- KEYS[2] -> done set
-- KEYS[3] -> failed hash
-- KEYS[4] -> blocked hash
-- ARGV[1] -> lifetime of the batch's keys in ms, from now
--
-- Returns: 1 if cancelled now, 0 if it was cancelled already, -1 if the
-- batch is unknown or expired.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type

local bad = wrongType({1, 'hash'})
if bad then return bad end

if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[1], 'cancelled_at') == 1 then return 0 end
-- uses: now_ms
local now = string.format('%d', nowMs())
redis.call('HSET', KEYS[1], 'cancelled_at', now, 'cancelled_by', 'cancel')
for k = 1, 4 do
  redis.call('PEXPIRE', KEYS[k], tonumber(ARGV[1]))
end
return 1
