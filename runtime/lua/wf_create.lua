-- wf_create: create a workflow with its steps, and release the steps
-- that wait for nobody. Made again for a workflow that exists, it
-- creates nothing and returns the steps released and not ended, so that
-- a dispatcher that failed part way pushes them (their pushes are
-- idempotent, step_push.lua).
--
-- KEYS[1..9] -> the workflow's keys (lib/workflow.lua)
-- ARGV[1] -> policy: f (fail) or c (continue)
-- ARGV[2] -> deadline in ms from now, 0 for none
-- ARGV[3] -> retention of the ended workflow, ms
-- ARGV[4] -> its catch callback, encoded ("" for none)
-- ARGV[5] -> not after: Redis ms past which the call writes and returns
--            nothing (an outbox relay's deadline), 0 for no bound
-- ARGV[6..] -> per step, 6 values: ID, job, need parents (joined by
--              commas), wait-only parents (joined by commas), may fail
--              ("1" or ""), and the job's ID if the ack of its parent may
--              push it as it stands (step_ack.lua; kept in the job hash
--              as "<step>#"), "" if not
--
-- Returns: {1 if created or 0 if it existed, then per released step
-- its ID, job, 0} (the release form of lib/workflow.lua, with no
-- results: a root needs none).
--
-- Errors: "ERR wf_create: ..." for arguments out of shape or a parent
-- that is not an earlier step; "WRONGTYPE ..." for a key of another
-- type; "LATE <now> <not after>" past ARGV[5]. All are checked before
-- the first write.

-- uses: wrong_type, now_ms, workflow

local bad = wfBad()
if bad then return bad end
local n = (#ARGV - 5) / 6
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
local seen, plist = {}, {}
for j = 0, n - 1 do
  local a = 6 + 6 * j
  plist[j + 1] = wfSplit(ARGV[a + 2] .. ',' .. ARGV[a + 3])
  for _, p in ipairs(plist[j + 1]) do
    if not seen[p] then
      return redis.error_reply('ERR wf_create: step ' .. ARGV[a] .. ' waits for ' .. p .. ', which is not a step added before it; nothing was written')
    end
  end
  if seen[ARGV[a]] then
    return redis.error_reply('ERR wf_create: step ' .. ARGV[a] .. ' comes twice; nothing was written')
  end
  seen[ARGV[a]] = true
end

out[1] = 1
-- what each hash gets, written at the end in commands of up to 500
-- fields (wfMany): a command a field costs more than the rest
local W = {state = {}, left = {}, job = {}, par = {}}
local cont, kids, order = {}, {}, {}
local function put(t, field, value)
  t[#t + 1] = field
  t[#t + 1] = value
end
for j = 0, n - 1 do
  local a = 6 + 6 * j
  local id = ARGV[a]
  local parents = plist[j + 1]
  local uniq, left = {}, 0
  for _, p in ipairs(parents) do
    if not uniq[p] then
      uniq[p] = true
      left = left + 1
      local k = kids[p]
      if not k then
        k = {}
        kids[p] = k
        order[#order + 1] = p
      end
      k[#k + 1] = id
    end
  end
  put(W.job, id, ARGV[a + 1])
  if ARGV[a + 5] ~= '' then put(W.job, id .. '#', ARGV[a + 5]) end
  put(W.left, id, left)
  if #parents > 0 then put(W.par, id, ARGV[a + 2] .. ';' .. ARGV[a + 3]) end
  if ARGV[a + 4] == '1' then cont[#cont + 1] = id end
  if left == 0 then
    put(W.state, id, 'q')
    out[#out + 1] = id
    out[#out + 1] = ARGV[a + 1]
    out[#out + 1] = 0
  else
    put(W.state, id, 'w')
  end
end
local lists = {}
for _, p in ipairs(order) do put(lists, p, table.concat(kids[p], ',')) end
wfMany('HSET', KEYS[WF.job], W.job)
wfMany('HSET', KEYS[WF.left], W.left)
wfMany('HSET', KEYS[WF.par], W.par)
wfMany('HSET', KEYS[WF.state], W.state)
wfMany('HSET', KEYS[WF.kids], lists)
wfMany('SADD', KEYS[WF.cont], cont)
redis.call('HSET', KEYS[WF.meta], 'st', 'run', 'n', n, 'open', n, 'pol', ARGV[1],
  'dl', dl > 0 and (now + dl) or 0, 'ret', ret, 'at', now)
if ARGV[4] ~= '' then redis.call('HSET', KEYS[WF.meta], 'cb', ARGV[4]) end
return out
