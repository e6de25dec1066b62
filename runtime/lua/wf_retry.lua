-- wf_retry: run a failed or cancelled workflow again from the steps
-- that did not succeed. Its failed and dropped steps wait again, with
-- new jobs; those whose parents have all succeeded are released. The
-- steps that succeeded keep their results and do not run again. Its
-- deadline, if it had one, is gone.
--
-- KEYS[1..9] -> the workflow's keys (lib/workflow.lua)
-- ARGV[1..] -> per step to run again, 2 values: its ID and its new job
--
-- Returns: {"ok", then per released step its release (lib/workflow.lua)},
-- or {"not", state} for a workflow that is not failed or cancelled, or a
-- step that is not failed or dropped: nothing is written then.
--
-- Errors: "ERR wf_retry: ..." for arguments out of shape; "WRONGTYPE ..."
-- for a key of another type. Both are checked before the first write.

-- uses: wrong_type, workflow

local bad = wfBad()
if bad then return bad end
if #ARGV < 2 or #ARGV % 2 ~= 0 then
  return redis.error_reply('ERR wf_retry: want pairs of a step and its job')
end
local st = redis.call('HGET', KEYS[WF.meta], 'st')
if st ~= 'failed' and st ~= 'cancelled' then return {'not', st or 'gone'} end
for i = 1, #ARGV, 2 do
  local s = redis.call('HGET', KEYS[WF.state], ARGV[i])
  if s ~= 'f' and s ~= 'x' then return {'not', 'step ' .. ARGV[i] .. ' is ' .. tostring(s)} end
end
local again = {}
for i = 1, #ARGV, 2 do
  again[ARGV[i]] = true
  redis.call('HSET', KEYS[WF.state], ARGV[i], 'w')
  redis.call('HSET', KEYS[WF.job], ARGV[i], ARGV[i + 1])
  -- its new job has a new ID: its parent's ack does not push it itself
  redis.call('HDEL', KEYS[WF.job], ARGV[i] .. '#')
end
local open = 0
local states = redis.call('HGETALL', KEYS[WF.state])
for i = 1, #states, 2 do
  if states[i + 1] == 'w' or states[i + 1] == 'q' then open = open + 1 end
end
redis.call('HSET', KEYS[WF.meta], 'st', 'run', 'open', open, 'why', '', 'dl', 0)
redis.call('HDEL', KEYS[WF.meta], 'end', 'caught', 'failer')
for k = 1, 9 do redis.call('PERSIST', KEYS[k]) end
local out = {'ok'}
for i = 1, #ARGV, 2 do
  local needs, waits = wfParents(ARGV[i])
  local uniq, left = {}, 0
  for _, list in ipairs({needs, waits}) do
    for _, p in ipairs(list) do
      if not uniq[p] then
        uniq[p] = true
        if redis.call('HGET', KEYS[WF.state], p) ~= 's' then left = left + 1 end
      end
    end
  end
  redis.call('HSET', KEYS[WF.left], ARGV[i], left)
  if left == 0 then
    redis.call('HSET', KEYS[WF.state], ARGV[i], 'q')
    wfRelease(out, ARGV[i])
  end
end
return out
