-- wf_spawn: add steps to a running workflow, spawned by one of its steps
-- while it runs. Each new step waits for its spawner and for the parents
-- named; none is released here: the spawner's success releases them
-- (wf_settle.lua), and its failure leaves them to the next attempt,
-- which spawns them again under the same IDs.
--
-- KEYS[1..9] -> the workflow's keys (lib/workflow.lua)
-- ARGV[1] -> the spawner's step ID
-- ARGV[2] -> the spawner's attempt
-- ARGV[3] -> the most steps the workflow may hold
-- ARGV[4..] -> per step, 5 values: ID, job, need parents, wait-only
--              parents (each joined by commas), may fail ("1" or "")
--
-- Returns: {"ok", steps the workflow holds}, or {"dropped", state} when
-- the spawner is no longer running (the workflow ended, or it ended):
-- nothing is written then.
--
-- Errors: "ERR wf_spawn: ..." for arguments out of shape, a parent the
-- workflow does not have, or too many steps; "WRONGTYPE ..." for a key
-- of another type. All are checked before the first write.

-- uses: wrong_type, workflow

local bad = wfBad()
if bad then return bad end
local spawner, attempt, most = ARGV[1], ARGV[2], tonumber(ARGV[3])
local n = (#ARGV - 3) / 5
if n < 1 or n ~= math.floor(n) or not most then
  return redis.error_reply('ERR wf_spawn: want a spawner, an attempt, a bound and whole steps; nothing was written')
end
local m = redis.call('HMGET', KEYS[WF.meta], 'st', 'n')
local st = m[1]
if st ~= 'run' or redis.call('HGET', KEYS[WF.state], spawner) ~= 'q' then
  return {'dropped', st or 'gone'}
end
-- the states of the steps named, read once each, 1000 a call: the new
-- steps' first, then the other parents
local ids = {}
for j = 0, n - 1 do ids[j + 1] = ARGV[4 + 5 * j] end
local known = {}
for i = 1, n, 1000 do
  local got = redis.call('HMGET', KEYS[WF.state], unpack(ids, i, math.min(i + 999, n)))
  for k = 1, #got do known[ids[i + k - 1]] = got[k] end
end
-- (a fan-in spawned after many steps names them all)
local plist, others, queued = {}, {}, {}
for j = 0, n - 1 do
  local a = 4 + 5 * j
  local ps = wfSplit(ARGV[a + 2] .. ',' .. ARGV[a + 3])
  plist[j + 1] = ps
  for _, p in ipairs(ps) do
    if known[p] == nil and not queued[p] then
      queued[p] = true
      others[#others + 1] = p
    end
  end
end
for i = 1, #others, 1000 do
  local got = redis.call('HMGET', KEYS[WF.state], unpack(others, i, math.min(i + 999, #others)))
  for k = 1, #got do known[others[i + k - 1]] = got[k] end
end
local function stateOf(p)
  local s = known[p]
  if s == nil then
    s = redis.call('HGET', KEYS[WF.state], p)
    known[p] = s
  end
  return s
end
local new, fresh, was = {}, 0, {}
for j = 0, n - 1 do
  local a = 4 + 5 * j
  local id = ARGV[a]
  was[id] = known[id]
  new[id] = true
  if not known[id] then fresh = fresh + 1 end
  for _, p in ipairs(plist[j + 1]) do
    if not new[p] and not stateOf(p) then
      return redis.error_reply('ERR wf_spawn: step ' .. id .. ' waits for ' .. p .. ', which the workflow does not have; nothing was written')
    end
  end
end
if tonumber(m[2]) + fresh > most then
  return redis.error_reply('ERR wf_spawn: the workflow would hold ' .. (tonumber(m[2]) + fresh) .. ' steps, over its bound of ' .. most .. '; nothing was written')
end

-- what each hash gets, written at the end in HSETs of up to 500 fields
-- (wfMany): a command a field costs more than the rest of a spawn. Each
-- parent's new dependents are appended to its list once (wfAppendKids).
local W = {state = {}, left = {}, job = {}, par = {}, gen = {}}
local cont, notCont = {}, {}
local add, order = {}, {}
for j = 0, n - 1 do
  local a = 4 + 5 * j
  local id = ARGV[a]
  local isNew = not was[id]
  local parents = plist[j + 1]
  parents[#parents + 1] = spawner
  local uniq, left = {}, 0
  for _, p in ipairs(parents) do
    if not uniq[p] then
      uniq[p] = true
      local ps = new[p] and 'w' or stateOf(p)
      if ps ~= 's' and ps ~= 'f' then left = left + 1 end
      if isNew then wfAddKid(add, order, p, id) end
    end
  end
  wfPut(W.state, id, 'w')
  wfPut(W.left, id, left)
  wfPut(W.job, id, ARGV[a + 1])
  wfPut(W.par, id, ARGV[a + 2] .. ';' .. ARGV[a + 3] .. ',' .. spawner)
  wfPut(W.gen, id, attempt)
  if ARGV[a + 4] == '1' then cont[#cont + 1] = id elseif not isNew then notCont[#notCont + 1] = id end
end
wfMany('HSET', KEYS[WF.state], W.state)
wfMany('HSET', KEYS[WF.left], W.left)
wfMany('HSET', KEYS[WF.job], W.job)
wfMany('HSET', KEYS[WF.par], W.par)
wfMany('HSET', KEYS[WF.gen], W.gen)
wfMany('SADD', KEYS[WF.cont], cont)
wfMany('SREM', KEYS[WF.cont], notCont)
-- each parent's list of dependents gains the new steps after it
wfAppendKids(add, order, false)
local total = redis.call('HINCRBY', KEYS[WF.meta], 'n', fresh)
redis.call('HINCRBY', KEYS[WF.meta], 'open', fresh)
return {'ok', total}
