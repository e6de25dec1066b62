-- wf_cancel: end a running workflow before its steps do: cancelled by
-- an operator, or failed when its deadline has passed. Its waiting
-- steps are dropped; its released ones are returned, for the caller to
-- take out of their queues or cancel where they run.
--
-- KEYS[1..9] -> the workflow's keys (lib/workflow.lua)
-- ARGV[1] -> cancel, or deadline (ends it only if its deadline passed)
--
-- Returns: {state after the call, "failed" if this call ended it (then
-- per released step its ID and job) or "not" if not}; state "gone" for
-- a workflow that is not there.
--
-- Errors: "ERR wf_cancel: ..." for an unknown kind; "WRONGTYPE ..." for
-- a key of another type. Both are checked before the first write.

-- uses: wrong_type, now_ms, workflow

local bad = wfBad()
if bad then return bad end
if ARGV[1] ~= 'cancel' and ARGV[1] ~= 'deadline' then
  return redis.error_reply('ERR wf_cancel: want cancel or deadline, got ' .. tostring(ARGV[1]))
end
local m = redis.call('HMGET', KEYS[WF.meta], 'st', 'dl')
if not m[1] then return {'gone', 'not'} end
local now = nowMs()
if m[1] ~= 'run' then return {m[1], 'not'} end
if ARGV[1] == 'deadline' and (tonumber(m[2]) == 0 or now < tonumber(m[2])) then
  return {m[1], 'not'}
end
local st = ARGV[1] == 'cancel' and 'cancelled' or 'failed'
local out = {st, 'failed'}
wfEnd(st, ARGV[1] == 'cancel' and 'cancelled' or 'deadline', now, out)
return out
