-- lib workflow_build: a workflow's steps stored, as wf_create.lua takes
-- them in one call and wf_build.lua in parts. Steps come in ARGV from
-- index a, 6 values each: ID, job, need parents (joined by commas),
-- wait-only parents (joined by commas), may fail ("1" or ""), and the
-- job's ID if the ack of its parent may push it as it stands (kept in
-- the job hash as "<step>#"), "" if not. They are written to the hashes
-- WF points at (lib/workflow.lua).

-- wfCheck checks n steps from ARGV[a]: each one's parents come before
-- it, in ARGV or, if stored, in the state hash (an earlier part); no step
-- comes twice. It returns an error reply naming the first step at fault
-- (for script name), or nil and each step's parents.
local function wfCheck(name, a, n, stored)
  local seen, plist, ask, asker, ids = {}, {}, {}, {}, {}
  for j = 0, n - 1 do
    local at = a + 6 * j
    local id = ARGV[at]
    local parents = wfSplit(ARGV[at + 2] .. ',' .. ARGV[at + 3])
    plist[j + 1] = parents
    for _, p in ipairs(parents) do
      if not seen[p] and not asker[p] then
        if not stored then
          return redis.error_reply('ERR ' .. name .. ': step ' .. id .. ' waits for ' .. p .. ', which is not a step added before it; nothing was written')
        end
        asker[p] = id
        ask[#ask + 1] = p
      end
    end
    if seen[id] then
      return redis.error_reply('ERR ' .. name .. ': step ' .. id .. ' comes twice; nothing was written')
    end
    seen[id] = true
    ids[#ids + 1] = id
  end
  if stored then
    -- the parents not in this part must be stored; its steps must not
    for i = 1, #ask, 1000 do
      local got = redis.call('HMGET', KEYS[WF.state], unpack(ask, i, math.min(i + 999, #ask)))
      for x = 1, #got do
        local p = ask[i + x - 1]
        if not got[x] then
          return redis.error_reply('ERR ' .. name .. ': step ' .. asker[p] .. ' waits for ' .. p .. ', which is not a step added before it; nothing was written')
        end
      end
    end
    for i = 1, #ids, 1000 do
      local got = redis.call('HMGET', KEYS[WF.state], unpack(ids, i, math.min(i + 999, #ids)))
      for x = 1, #got do
        if got[x] then
          return redis.error_reply('ERR ' .. name .. ': step ' .. ids[i + x - 1] .. ' comes twice; nothing was written')
        end
      end
    end
  end
  return nil, plist
end

-- wfStore writes n steps from ARGV[a], whose parents wfCheck returned
-- (plist): their jobs, parents, counts of parents, states (q for a step
-- that waits for nobody, w for the rest) and the may-fail set; and each
-- parent's list of dependents, appended to if stored (an earlier part
-- wrote it). Each hash is written 500 fields a command: a command a
-- field costs more than the rest. It returns the ARGV index of each step
-- that waits for nobody, in order.
local function wfStore(a, n, plist, stored)
  local W = {state = {}, left = {}, job = {}, par = {}}
  local cont, kids, order, roots = {}, {}, {}, {}
  for j = 0, n - 1 do
    local at = a + 6 * j
    local id = ARGV[at]
    local parents = plist[j + 1]
    local uniq, left = {}, 0
    for _, p in ipairs(parents) do
      if not uniq[p] then
        uniq[p] = true
        left = left + 1
        wfAddKid(kids, order, p, id)
      end
    end
    wfPut(W.job, id, ARGV[at + 1])
    if ARGV[at + 5] ~= '' then wfPut(W.job, id .. '#', ARGV[at + 5]) end
    wfPut(W.left, id, left)
    if #parents > 0 then wfPut(W.par, id, ARGV[at + 2] .. ';' .. ARGV[at + 3]) end
    if ARGV[at + 4] == '1' then cont[#cont + 1] = id end
    if left == 0 then
      wfPut(W.state, id, 'q')
      roots[#roots + 1] = at
    else
      wfPut(W.state, id, 'w')
    end
  end
  wfAppendKids(kids, order, not stored)
  wfMany('HSET', KEYS[WF.job], W.job)
  wfMany('HSET', KEYS[WF.left], W.left)
  wfMany('HSET', KEYS[WF.par], W.par)
  wfMany('HSET', KEYS[WF.state], W.state)
  wfMany('SADD', KEYS[WF.cont], cont)
  return roots
end
