-- lib workflow: the graph of a workflow's steps, as the wf_*.lua scripts
-- keep it. Every such script takes the workflow's keys first, in this
-- order (keyspace.WorkflowKeys, all in the slot {wf:<id>}):
--   1 -> meta hash: st (run, ok, failed, cancelled), n (steps), open
--        (steps not ended), pol (f: fail, c: continue), dl (deadline,
--        Redis unix ms, 0 for none), ret (retention ms), at, end, why
--   2 -> state hash: step -> w (waiting), q (released: queued or
--        running), s (succeeded), f (failed), x (dropped)
--   3 -> left hash: step -> its parents not ended yet
--   4 -> kids hash: step -> its dependents' IDs, joined by commas
--   5 -> parents hash: step -> the parents whose results it needs,
--        joined by commas, then ";", then the parents it only waits for
--   6 -> job hash: step -> its job, encoded by the engine (opaque here);
--        and "<step>#" -> its job's ID, for a step its parent's ack may
--        push as it stands (step_ack.lua: its job is then the payload)
--   7 -> results hash: step -> its result
--   8 -> may-fail set: the steps whose failure the workflow survives
--   9 -> generation hash: spawned step -> the attempt of its spawner
--        that spawned it
-- A parent has ended for its dependents when it succeeded, or failed
-- under the continue policy (its state is s or f while the workflow
-- runs).
-- A script that takes the keys of several workflows (step_ack) points WF
-- at each one's in turn: wfAt(b) for the keys KEYS[b + 1..b + 9].
local WF = {meta = 1, state = 2, left = 3, kids = 4, par = 5, job = 6, res = 7, cont = 8, gen = 9}
local function wfAt(b)
  WF.meta, WF.state, WF.left, WF.kids, WF.par, WF.job, WF.res, WF.cont, WF.gen =
    b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7, b + 8, b + 9
end

-- wfBad returns an error reply if a workflow key holds another type.
local function wfBad()
  local b = WF.meta - 1
  return wrongType({b + 1, 'hash', b + 2, 'hash', b + 3, 'hash', b + 4, 'hash', b + 5, 'hash', b + 6, 'hash',
    b + 7, 'hash', b + 8, 'set', b + 9, 'hash'})
end

local function wfSplit(s)
  if not s or s == '' then return {} end
  if not string.find(s, ',', 1, true) then return {s} end
  local out = {}
  for id in string.gmatch(s, '[^,]+') do out[#out + 1] = id end
  return out
end

-- wfMany calls cmd on key with the values of list, 1000 a call (a
-- hash's fields and values in pairs: 500 fields a call); none for an
-- empty list.
local function wfMany(cmd, key, list)
  for i = 1, #list, 1000 do
    redis.call(cmd, key, unpack(list, i, math.min(i + 999, #list)))
  end
end

-- wfPut appends a field and its value to t, a hash's pairs to write.
local function wfPut(t, field, value)
  t[#t + 1] = field
  t[#t + 1] = value
end

-- wfAddKid records that step id is a new dependent of p: adds maps a
-- parent to its new dependents (an ID, or a table of them: a parent
-- gaining one, as each of a fan-in's does, keeps the ID, not a table),
-- and order lists the parents as first named.
local function wfAddKid(adds, order, p, id)
  local had = adds[p]
  if not had then
    adds[p] = id
    order[#order + 1] = p
  elseif type(had) == 'string' then
    adds[p] = {had, id}
  else
    had[#had + 1] = id
  end
end

-- wfAppendKids appends to each parent's list of dependents its new ones
-- (adds and order, as wfAddKid keeps them), the lists read, unless none
-- exists yet (fresh), and written 500 a call: appending one at a time
-- would copy a list each time, quadratic in a wide fan-out.
local function wfAppendKids(adds, order, fresh)
  for i = 1, #order, 500 do
    local e = math.min(i + 499, #order)
    local cur = fresh and {} or redis.call('HMGET', KEYS[WF.kids], unpack(order, i, e))
    local args = {}
    for x = i, e do
      local p, had = order[x], cur[x - i + 1]
      local joined = adds[p]
      if type(joined) == 'table' then joined = table.concat(joined, ',') end
      args[2 * (x - i) + 1], args[2 * (x - i) + 2] = p, had and (had .. ',' .. joined) or joined
    end
    redis.call('HSET', KEYS[WF.kids], unpack(args))
  end
end

-- wfParents returns the step's need parents and wait-only parents.
local function wfParents(step)
  local p = redis.call('HGET', KEYS[WF.par], step)
  if not p then return {}, {} end
  local cut = string.find(p, ';', 1, true)
  return wfSplit(string.sub(p, 1, cut - 1)), wfSplit(string.sub(p, cut + 1))
end

-- WF_READ is the most results a release hands a step. A step that needs
-- more (a wide fan-in) reads them itself when it runs, 1000 a call
-- (rdb Store.WfNeeded): no call holds Redis to read and reply them all,
-- and its job is pushed and reserved without them.
local WF_READ = 1000

-- wfReleaseMany appends to out each released step of steps, in order:
-- its ID, job, the number of needed results and the results (false for
-- none), or -1 and no results for a step that needs more than WF_READ.
-- Parents and jobs are read 1000 steps a call, results 1000 a call.
local function wfReleaseMany(out, steps)
  local par, job = {}, {}
  for i = 1, #steps, 1000 do
    local j = math.min(i + 999, #steps)
    local p = redis.call('HMGET', KEYS[WF.par], unpack(steps, i, j))
    local b = redis.call('HMGET', KEYS[WF.job], unpack(steps, i, j))
    for x = 1, j - i + 1 do
      par[i + x - 1] = p[x]
      job[i + x - 1] = b[x]
    end
  end
  local o = #out
  for x, step in ipairs(steps) do
    local p, needs = par[x], nil
    out[o + 1] = step
    out[o + 2] = job[x]
    out[o + 3] = 0
    o = o + 3
    -- (59 is ";": a step that needs no result has no text before it)
    if p and string.byte(p, 1) ~= 59 then
      local cut = string.find(p, ';', 1, true)
      -- its needs are counted up to WF_READ + 1 before any is split out
      local c, at = 1, 1
      while c <= WF_READ do
        local e = string.find(p, ',', at, true)
        if not e or e > cut then break end
        c, at = c + 1, e + 1
      end
      if c > WF_READ then
        out[o] = -1
      else
        needs = wfSplit(string.sub(p, 1, cut - 1))
        out[o] = #needs
      end
    end
    if needs then
      for i = 1, #needs, 1000 do
        local r = redis.call('HMGET', KEYS[WF.res], unpack(needs, i, math.min(i + 999, #needs)))
        for k = 1, #r do out[o + k] = r[k] end
        o = o + #r
      end
    end
  end
end

-- wfRelease appends one released step to out, as wfReleaseMany does.
local function wfRelease(out, step)
  wfReleaseMany(out, {step})
end

-- wfExpire sets every key of the workflow to expire in ms.
local function wfExpire(ms)
  for k = WF.meta, WF.gen do redis.call('PEXPIRE', KEYS[k], ms) end
end

-- wfEnd ends a running workflow as st (failed, cancelled) for why:
-- its waiting steps are dropped, and out gets each released step's ID
-- and job, for the caller to take out of its queue or cancel. The marks
-- of releases in parts ("<step>>" in the kids hash,
-- lib/workflow_settle.lua) go: what they had left is dropped, and a
-- retry counts its steps afresh.
local function wfEnd(st, why, now, out)
  local marks = {}
  for _, f in ipairs(redis.call('HKEYS', KEYS[WF.kids])) do
    if string.byte(f, -1) == 62 then marks[#marks + 1] = f end -- (62 is ">")
  end
  for i = 1, #marks, 1000 do
    redis.call('HDEL', KEYS[WF.kids], unpack(marks, i, math.min(i + 999, #marks)))
  end
  local all = redis.call('HGETALL', KEYS[WF.state])
  local dropped = 0
  for i = 1, #all, 2 do
    local s = all[i + 1]
    if s == 'w' then
      redis.call('HSET', KEYS[WF.state], all[i], 'x')
      dropped = dropped + 1
    elseif s == 'q' then
      out[#out + 1] = all[i]
      out[#out + 1] = redis.call('HGET', KEYS[WF.job], all[i])
    end
  end
  redis.call('HSET', KEYS[WF.meta], 'st', st, 'why', why, 'end', now)
  if dropped > 0 then
    -- (never -0: Redis takes no "-0" for an integer)
    redis.call('HINCRBY', KEYS[WF.meta], 'open', -dropped)
  end
  wfExpire(tonumber(redis.call('HGET', KEYS[WF.meta], 'ret')))
end
