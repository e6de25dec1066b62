-- lib workflow_build: a workflow's steps stored, as wf_create.lua takes
-- them in one call and wf_build.lua in parts. Steps come in ARGV from
-- index a, 6 values each: ID, job, need parents (joined by commas),
-- wait-only parents (joined by commas), flags, and the job's ID if the
-- ack of its parent may push it as it stands (kept in the job hash as
-- "<step>#"), "" if not. The flags are "1" for a step whose failure the
-- workflow survives, "" for one whose failure fails it; followed, for a
-- step with more parents than a part names, by "-" and its number of
-- parents: its parents' lists of dependents gain it by link entries
-- after it, each with the flags "+", the step's ID, no job, and the
-- parents to link as its need parents (no more than a part names), so
-- that no call handles them all. They are written to the hashes WF
-- points at (lib/workflow.lua).

-- wfEntry reads the entry at ARGV[at]: its ID, its parents (those to
-- link, for a link entry; none for a step linked by link entries),
-- whether it is a link entry, whether it may fail, and its number of
-- parents if link entries link them.
local function wfEntry(at)
  local id, flags = ARGV[at], ARGV[at + 4]
  if flags == '+' then return id, wfSplit(ARGV[at + 2]), true, false, nil end
  local mayFail = string.byte(flags, 1) == 49 -- "1"
  local cut = string.find(flags, '-', 1, true)
  if cut then return id, {}, false, mayFail, tonumber(string.sub(flags, cut + 1)) end
  return id, wfSplit(ARGV[at + 2] .. ',' .. ARGV[at + 3]), false, mayFail, nil
end

-- wfCheck checks n entries from ARGV[a]: each step's parents come
-- before it, in ARGV or, if stored, in the state hash (an earlier part);
-- no step comes twice; a link entry's step and parents come before it.
-- It returns an error reply naming the first step at fault (for script
-- name), or nil and each entry's parents.
local function wfCheck(name, a, n, stored)
  local seen, plist, ask, asker, ids, linked = {}, {}, {}, {}, {}, {}
  local function before(what)
    return redis.error_reply('ERR ' .. name .. ': ' .. what .. ', which is not a step added before it; nothing was written')
  end
  for j = 0, n - 1 do
    local id, parents, link, _, count = wfEntry(a + 6 * j)
    if not link and not (count and count >= 1) and string.find(ARGV[a + 6 * j + 4], '-', 1, true) then
      return redis.error_reply('ERR ' .. name .. ': step ' .. id .. ' has flags ' .. ARGV[a + 6 * j + 4] .. '; nothing was written')
    end
    plist[j + 1] = parents
    for _, p in ipairs(parents) do
      if not seen[p] and not asker[p] then
        if not stored then return before('step ' .. id .. ' waits for ' .. p) end
        asker[p] = id
        ask[#ask + 1] = p
      end
    end
    if link then
      if not seen[id] then
        if not stored then return before('a link entry names step ' .. id) end
        linked[#linked + 1] = id
      end
    else
      if seen[id] then
        return redis.error_reply('ERR ' .. name .. ': step ' .. id .. ' comes twice; nothing was written')
      end
      seen[id] = true
      ids[#ids + 1] = id
    end
  end
  if stored then
    -- the parents and linked steps not in this part must be stored; its
    -- steps must not
    for i = 1, #ask, 1000 do
      local got = redis.call('HMGET', KEYS[WF.state], unpack(ask, i, math.min(i + 999, #ask)))
      for x = 1, #got do
        local p = ask[i + x - 1]
        if not got[x] then return before('step ' .. asker[p] .. ' waits for ' .. p) end
      end
    end
    for i = 1, #linked, 1000 do
      local got = redis.call('HMGET', KEYS[WF.state], unpack(linked, i, math.min(i + 999, #linked)))
      for x = 1, #got do
        if not got[x] then return before('a link entry names step ' .. linked[i + x - 1]) end
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

-- wfStore writes n entries from ARGV[a], whose parents wfCheck returned
-- (plist): the steps' jobs, parents, counts of parents, states (q for a
-- step that waits for nobody, w for the rest) and the may-fail set; and
-- each parent's list of dependents, appended to if stored (an earlier
-- part wrote it). Each hash is written 500 fields a command: a command a
-- field costs more than the rest. It returns the ARGV index of each step
-- that waits for nobody, in order, and the number of steps (entries but
-- the link entries).
local function wfStore(a, n, plist, stored)
  local W = {state = {}, left = {}, job = {}, par = {}}
  local cont, kids, order, roots, steps = {}, {}, {}, {}, 0
  for j = 0, n - 1 do
    local at = a + 6 * j
    local id, _, link, mayFail, count = wfEntry(at)
    local parents = plist[j + 1]
    local uniq, left = {}, 0
    for _, p in ipairs(parents) do
      if not uniq[p] then
        uniq[p] = true
        left = left + 1
        wfAddKid(kids, order, p, id)
      end
    end
    if not link then
      steps = steps + 1
      left = count or left
      wfPut(W.job, id, ARGV[at + 1])
      if ARGV[at + 5] ~= '' then wfPut(W.job, id .. '#', ARGV[at + 5]) end
      wfPut(W.left, id, left)
      if left > 0 then wfPut(W.par, id, ARGV[at + 2] .. ';' .. ARGV[at + 3]) end
      if mayFail then cont[#cont + 1] = id end
      if left == 0 then
        wfPut(W.state, id, 'q')
        roots[#roots + 1] = at
      else
        wfPut(W.state, id, 'w')
      end
    end
  end
  wfAppendKids(kids, order, not stored)
  wfMany('HSET', KEYS[WF.job], W.job)
  wfMany('HSET', KEYS[WF.left], W.left)
  wfMany('HSET', KEYS[WF.par], W.par)
  wfMany('HSET', KEYS[WF.state], W.state)
  wfMany('SADD', KEYS[WF.cont], cont)
  return roots, steps
end
