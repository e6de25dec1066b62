-- wf_create: create a workflow with its steps, and release the steps
-- that wait for nobody. Made again for a workflow that exists, it
-- creates nothing and returns the steps released and not ended, so that
-- a dispatcher that failed part way pushes them (their pushes are
-- idempotent, step_push.lua).
--
-- A wide workflow is stored in parts first (wf_build.lua), under keys of
-- its own; wf_create then takes those keys too, and no steps, and makes
-- them the workflow's, if every part is there.
--
-- KEYS[1..9] -> the workflow's keys (lib/workflow.lua)
-- KEYS[10..18] -> for a workflow stored in parts, the keys its parts
--                 were stored under, in the same order
-- ARGV[1] -> policy: f (fail) or c (continue)
-- ARGV[2] -> deadline in ms from now, 0 for none
-- ARGV[3] -> retention of the ended workflow, ms
-- ARGV[4] -> its catch callback, encoded ("" for none)
-- ARGV[5] -> not after: Redis ms past which the call writes and returns
--            nothing (an outbox relay's deadline), 0 for no bound
-- ARGV[6..] -> per entry, 6 values (lib/workflow_build.lua); or, for a
--              workflow stored in parts, the number of parts and the
--              digest of its steps (as wf_build.lua took them)
--
-- Returns: {1 if created or 0 if it existed, then per released step
-- its ID, job, 0} (the release form of lib/workflow.lua, with no
-- results: a root needs none). For a workflow stored in parts it
-- returns {1} when created: its caller knows the steps that wait for
-- nobody.
--
-- Errors: "ERR wf_create: ..." for arguments out of shape or a parent
-- that is not an earlier step; "WRONGTYPE ..." for a key of another
-- type; "LATE <now> <not after>" past ARGV[5]; "BUILD ..." for a
-- workflow whose parts are not all stored (dispatch it again). All are
-- checked before the first write.

-- uses: wrong_type, now_ms, workflow, workflow_build

local bad = wfBad()
if bad then return bad end
local staged = #KEYS == 18
if staged then
  wfAt(9)
  bad = wfBad()
  wfAt(0)
  if bad then return bad end
end
local n = (#ARGV - 5) / 6
local parts = tonumber(ARGV[6])
if staged then n = (#ARGV == 7 and parts and parts > 0) and 1 or 0 end
local dl, ret, late = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[5])
if n < 1 or n ~= math.floor(n) or (ARGV[1] ~= 'f' and ARGV[1] ~= 'c') or not dl or not ret or ret < 1 or not late then
  return redis.error_reply('ERR wf_create: want a policy, a deadline, a retention, a bound and whole steps; nothing was written')
end
local now = nowMs()
if late > 0 and now > late then
  return redis.error_reply(string.format('LATE %d %d', now, late))
end
local out = {0}
if redis.call('EXISTS', KEYS[WF.meta]) == 1 then
  local st = redis.call('HGETALL', KEYS[WF.state])
  for i = 1, #st, 2 do
    if st[i + 1] == 'q' then wfRelease(out, st[i]) end
  end
  return out
end
if staged then
  local m = redis.call('HMGET', KEYS[10], 'sum', 'b', 'n')
  if m[1] ~= ARGV[7] or tonumber(m[2]) ~= parts then
    return redis.error_reply(string.format('BUILD workflow: %d of its %d parts are stored%s; nothing was written',
      m[1] == ARGV[7] and tonumber(m[2]) or 0, parts, m[1] and m[1] ~= ARGV[7] and ', of another graph' or ''))
  end
  -- (the results and spawned hashes begin empty)
  for k = WF.state, WF.cont do
    if k ~= WF.res and redis.call('EXISTS', KEYS[9 + k]) == 1 then
      redis.call('RENAME', KEYS[9 + k], KEYS[k])
      redis.call('PERSIST', KEYS[k])
    end
  end
  redis.call('DEL', KEYS[10])
  n = tonumber(m[3])
  out[1] = 1
else
  local err, plist = wfCheck('wf_create', 6, n, false)
  if err then return err end
  out[1] = 1
  local roots
  roots, n = wfStore(6, n, plist, false)
  for _, a in ipairs(roots) do
    out[#out + 1] = ARGV[a]
    out[#out + 1] = ARGV[a + 1]
    out[#out + 1] = 0
  end
end
redis.call('HSET', KEYS[WF.meta], 'st', 'run', 'n', n, 'open', n, 'pol', ARGV[1],
  'dl', dl > 0 and (now + dl) or 0, 'ret', ret, 'at', now)
if ARGV[4] ~= '' then redis.call('HSET', KEYS[WF.meta], 'cb', ARGV[4]) end
return out
