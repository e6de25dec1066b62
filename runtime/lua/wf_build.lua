-- wf_build: store one part of a wide workflow's steps under keys of its
-- own, for wf_create.lua to make them the workflow's once every part is
-- there. No call then holds Redis for the whole graph. Parts come in
-- order; a part stored before (the same graph, dispatched again) is
-- skipped, and part 0 of another graph drops what an earlier dispatch
-- left. The keys expire unless wf_create takes them.
--
-- KEYS[1..9] -> the keys the parts are stored under, in the order of
--               the workflow's keys (lib/workflow.lua); its meta hash
--               holds sum (the graph's digest), b (the parts stored) and
--               n (their steps)
-- KEYS[10] -> the workflow's meta hash: a workflow created already
--             needs no part
-- ARGV[1] -> the digest of the workflow's steps, all parts
-- ARGV[2] -> this part's index, from 0
-- ARGV[3] -> the stored parts' lifetime, ms
-- ARGV[4] -> not after: Redis ms past which the call writes nothing, 0
--            for no bound (an outbox relay's deadline)
-- ARGV[5..] -> per entry, 6 values (lib/workflow_build.lua): a step, or
--              a link entry of a step with more parents than a part
--              names
--
-- Returns: "stored", "skipped" (stored before) or "exists" (the
-- workflow was created).
--
-- Errors: "ERR wf_build: ..." for arguments out of shape or a parent
-- that is not an earlier step; "WRONGTYPE ..." for a key of another
-- type; "LATE <now> <not after>" past ARGV[4]; "BUILD ..." for a part
-- out of order (an earlier one is missing: dispatch again). All are
-- checked before the first write.

-- uses: wrong_type, now_ms, workflow, workflow_build

local bad = wfBad() or typeError(KEYS[10], 'hash')
if bad then return bad end
local n = (#ARGV - 4) / 6
local part, ttl, late = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if n < 1 or n ~= math.floor(n) or ARGV[1] == '' or not part or part < 0 or not ttl or ttl < 1 or not late then
  return redis.error_reply('ERR wf_build: want a digest, a part, a lifetime, a bound and whole steps; nothing was written')
end
if late > 0 then
  local now = nowMs()
  if now > late then return redis.error_reply(string.format('LATE %d %d', now, late)) end
end
if redis.call('EXISTS', KEYS[10]) == 1 then return 'exists' end
local m = redis.call('HMGET', KEYS[WF.meta], 'sum', 'b')
local b = m[1] == ARGV[1] and tonumber(m[2]) or 0
if m[1] == ARGV[1] and b > part then return 'skipped' end
if part ~= b then
  return redis.error_reply(string.format('BUILD workflow part %d: %d parts of its graph are stored%s; nothing was written',
    part, b, m[1] and m[1] ~= ARGV[1] and ', of another graph' or ''))
end
local err, plist = wfCheck('wf_build', 5, n, part > 0)
if err then return err end
if part == 0 and m[1] then
  -- an earlier dispatch's parts, of another graph, not created
  for k = WF.meta, WF.gen do redis.call('DEL', KEYS[k]) end
end
local _, steps = wfStore(5, n, plist, part > 0)
redis.call('HSET', KEYS[WF.meta], 'sum', ARGV[1], 'b', part + 1)
redis.call('HINCRBY', KEYS[WF.meta], 'n', steps)
for k = WF.meta, WF.gen do redis.call('PEXPIRE', KEYS[k], ttl) end
return 'stored'
