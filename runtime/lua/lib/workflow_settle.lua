-- lib workflow_settle: the record of the ends of a workflow's steps, and
-- the release of the dependents each was the last parent of, as
-- wf_settle.lua and step_ack.lua make it (lib/workflow.lua's keys, at WF).
--
-- wfSettleOpen(steps, take, parts) reads what settling steps (their IDs)
-- needs and checks that the workflow has them: it returns S, or nil and
-- an error reply for a step the workflow (if it exists) does not have.
-- It writes nothing: a script opens every workflow it settles before its
-- first write. take, if given, is handed the IDs of the steps an end
-- releases, and returns true if it took them (step_ack pushes them): the
-- reply then does not list them.
-- S.settle(step, how, attempt, result, why) records one end, as if by a
-- call of its own, and returns its reply (wf_settle.lua says what).
-- With parts, a success with more than WF_PART dependents releases the
-- first WF_PART of them and replies "part" in place of "ended": the kids
-- hash keeps, under "<step>>", the byte of its list where the rest
-- begins, the byte where the list ended, and the attempt that ended
-- ("<rest>:<end>:<attempt>": a step spawned later with step among its
-- parents is appended to the list, and counted step ended when it was,
-- so the rest stops there; a dependent step spawned by another attempt
-- is dropped, part by part, and its ID left in the list), and
-- S.more(step) releases the next WF_PART (step_release.lua) until its
-- reply is "ended". So a fan-out's first children, spawned or not, run
-- while the rest are released, and no call holds Redis for the whole of
-- a wide release. A step whose release is in
-- parts, ended again, replies "part" too, after the steps released so
-- far that have not ended (for the caller to push again: their pushes
-- are idempotent).
-- S.close() writes what the ends left to write.
-- With WF pointed at another workflow's keys in between (wfAt), WF must
-- point at S's again before S.settle and S.close.
--
-- Uses wrong_type, now_ms and workflow, which the script names before it.

-- WF_PART is the most dependents one call releases, with parts.
local WF_PART = 1000

-- wfPart returns the IDs of the dependents in the list ks from byte at
-- to byte stop, WF_PART at most, and the byte after them (nil at stop).
local function wfPart(ks, at, stop)
  local ids, n = {}, 0
  while n < WF_PART do
    local e = string.find(ks, ',', at, true)
    n = n + 1
    if not e or e > stop then
      ids[n] = string.sub(ks, at, stop)
      return ids, nil
    end
    ids[n] = string.sub(ks, at, e - 1)
    at = e + 1
  end
  return ids, at
end

local function wfSettleOpen(steps, take, parts)
  -- The hashes a call reads and writes field by field go through H: a
  -- field read once is kept, a field written is kept and marked, and the
  -- marked fields are written at the end, one HSET a hash (flush). Before
  -- anything reads a whole hash, or sets keys to expire, flush writes them.
  local H = {}
  for _, k in ipairs({WF.state, WF.left, WF.kids, WF.res}) do H[k] = {v = {}, dirty = {}, nd = 0} end
  local function hget(k, f)
    local c = H[k]
    local v = c.v[f]
    if v == nil then
      v = redis.call('HGET', KEYS[k], f)
      c.v[f] = v
    end
    return v
  end
  -- hload reads fields of k not read yet, 1000 a call.
  local function hload(k, fields)
    local c, want = H[k], fields
    if next(c.v) ~= nil then
      -- (a first load, the common one, reads them all)
      want = {}
      for _, f in ipairs(fields) do
        if c.v[f] == nil then want[#want + 1] = f end
      end
    end
    for i = 1, #want, 1000 do
      local j = math.min(i + 999, #want)
      local r = redis.call('HMGET', KEYS[k], unpack(want, i, j))
      for x = 1, j - i + 1 do c.v[want[i + x - 1]] = r[x] end
    end
  end
  local function hset(k, f, v)
    local c = H[k]
    c.v[f] = v
    if not c.dirty[f] then
      c.dirty[f] = true
      c.nd = c.nd + 1
    end
  end
  local function hdel(k, f)
    local c = H[k]
    redis.call('HDEL', KEYS[k], f)
    c.v[f] = false
    if c.dirty[f] then
      c.dirty[f] = nil
      c.nd = c.nd - 1
    end
  end
  local function flush()
    for k, c in pairs(H) do
      if c.nd > 0 then
        local args = {}
        for f in pairs(c.dirty) do
          args[#args + 1] = f
          args[#args + 1] = c.v[f]
        end
        for i = 1, #args, 1000 do
          redis.call('HSET', KEYS[k], unpack(args, i, math.min(i + 999, #args)))
        end
        c.dirty, c.nd = {}, 0
      end
    end
  end

  hload(WF.state, steps)
  hload(WF.kids, steps)
  local exists = redis.call('EXISTS', KEYS[WF.meta]) == 1
  for _, step in ipairs(steps) do
    if exists and not hget(WF.state, step) then
      return nil, redis.error_reply('ERR wf_settle: workflow has no step ' .. step)
    end
  end
  local now = nowMs()
  -- the workflow's state, policy, deadline, open steps and retention, read
  -- once a call; a step that ends the workflow updates M.st, and the open
  -- steps' change is written at the end
  local M = redis.call('HMGET', KEYS[WF.meta], 'st', 'pol', 'dl', 'open', 'ret')
  M = {st = M[1], pol = M[2], dl = tonumber(M[3]), open = tonumber(M[4]), ret = tonumber(M[5]), dopen = 0, ended = false}
  local function closed(d)
    M.open = M.open - d
    M.dopen = M.dopen - d
  end
  -- finish ends the workflow as st for why (lib/workflow.lua wfEnd), with
  -- every write before it made first; its states are read afresh after.
  local function finish(st, why, out)
    flush()
    wfEnd(st, why, now, out)
    H[WF.state].v = {}
    M.st = st
    M.ended = true
  end

  -- again returns the released dependents of step, not ended, for a step
  -- that ended before
  local function again(step, st, tag)
    local out = {st, tag}
    if st ~= 'run' then return out end
    if hget(WF.kids, step .. '>') then out[2] = 'part' end
    local kids, rel = wfSplit(hget(WF.kids, step)), {}
    hload(WF.state, kids)
    for _, k in ipairs(kids) do
      if hget(WF.state, k) == 'q' then rel[#rel + 1] = k end
    end
    flush()
    wfReleaseMany(out, rel)
    return out
  end

  -- parentEnded records that a parent of k ended: it returns "r" if
  -- that was its last parent (k is released), nil otherwise.
  local function parentEnded(k)
    local left = (tonumber(hget(WF.left, k)) or 0) - 1
    if left <= 0 and hget(WF.state, k) == 'w' then
      -- (its count of parents left is not written: nothing reads it once
      -- the step is released, and a retry counts it afresh)
      hset(WF.state, k, 'q')
      return 'r'
    end
    hset(WF.left, k, left)
  end

  -- endKid records that a parent of k, step (ns: #step), ended: it
  -- returns "d" if k was spawned by another attempt of step than the one
  -- that ended (k is dropped), "r" if step was its last parent (k is
  -- released), nil otherwise. (A dependent whose ID does not begin
  -- "<step>." was not spawned by step: only its count of parents
  -- changes.)
  local function endKid(k, step, ns, attempt)
    -- a step spawned by step has the ID "<step>.<k>" (46 is ".")
    local g = #k > ns and string.byte(k, ns + 1) == 46 and string.sub(k, 1, ns) == step
      and redis.call('HGET', KEYS[WF.gen], k)
    if g and g ~= attempt then
      -- spawned by an attempt that failed: the attempt that ended spawned
      -- its own
      for kk = WF.meta, WF.gen do
        if H[kk] then hdel(kk, k)
        elseif kk == WF.cont then redis.call('SREM', KEYS[kk], k)
        elseif kk ~= WF.meta then redis.call('HDEL', KEYS[kk], k) end
      end
      return 'd'
    end
    return parentEnded(k)
  end

  local function settle(step, how, attempt, result, why)
    local st = M.st
    if not st then return {'gone', 'dropped'} end
    local cur = hget(WF.state, step)
    if how == 's' and cur == 'q' and st == 'run' and M.open > 1 and not (M.dl > 0 and now > M.dl) then
      -- The most common end, a fan-out's child but the last: a released
      -- step succeeds with one dependent, which it did not spawn and
      -- which waits on other parents still. It is recorded here, as the
      -- lines below would, at a fraction of their cost.
      local k = hget(WF.kids, step)
      if k and k ~= '' and not string.find(k, ',', 1, true)
        and not (#k > #step and string.byte(k, #step + 1) == 46 and string.sub(k, 1, #step) == step) then
        local left = (tonumber(hget(WF.left, k)) or 0) - 1
        if left > 0 then
          hset(WF.left, k, left)
          hset(WF.state, step, 's')
          if result ~= '' then hset(WF.res, step, result) end
          closed(1)
          return {st, 'ended'}
        end
      end
    end
    if not cur then return {st, 'dropped'} end -- dropped by a step before it in this call

    if cur == 'x' then return {st, 'dropped'} end
    if cur == 'f' and st == 'failed' and how == 'f' and redis.call('HGET', KEYS[WF.meta], 'failer') == step
      and not redis.call('HGET', KEYS[WF.meta], 'caught') then
      -- this step failed the workflow, and the catch has not run: the
      -- worker died in between; its failure, made again, runs it
      flush()
      local out = {'failed', 'failed'}
      local states = redis.call('HGETALL', KEYS[WF.state])
      for i = 1, #states, 2 do
        if states[i + 1] == 'q' then
          out[#out + 1] = states[i]
          out[#out + 1] = redis.call('HGET', KEYS[WF.job], states[i])
        end
      end
      return out
    end
    if cur == 's' or cur == 'f' then return again(step, st, 'again') end
    if how == 'r' then
      if st ~= 'run' then return {st, 'dropped'} end
      return {st, 'wait'}
    end
    if st == 'run' and M.dl > 0 and now > M.dl then
      local out = {'failed', 'failed'}
      finish('failed', 'deadline', out)
      -- the step's own outcome is still recorded
      if how == 's' then
        hset(WF.state, step, 's')
        if result ~= '' then hset(WF.res, step, result) end
      else
        hset(WF.state, step, 'f')
      end
      closed(1)
      return out
    end

    local survives = how == 's' or M.pol == 'c' or redis.call('SISMEMBER', KEYS[WF.cont], step) == 1
    if not survives then
      hset(WF.state, step, 'f')
      closed(1)
      if st ~= 'run' then return {st, 'dropped'} end
      local out = {'failed', 'failed'}
      finish('failed', 'step ' .. step .. ': ' .. why, out)
      redis.call('HSET', KEYS[WF.meta], 'failer', step)
      return out
    end

    hset(WF.state, step, how)
    if how == 's' and result ~= '' then hset(WF.res, step, result) end
    closed(1)
    local out = {st, 'ended'}
    if st ~= 'run' then return out end
    -- most steps have one dependent or none (a fan-out's children, a
    -- chain): no table is made for them
    local ks, ns = hget(WF.kids, step), #step
    local rel, kept, dropped = nil, nil, 0
    if ks and ks ~= '' and not string.find(ks, ',', 1, true) then
      local r = endKid(ks, step, ns, attempt)
      if r == 'r' then
        rel = {ks}
      elseif r == 'd' then
        kept, dropped = {}, 1
      end
    elseif ks and ks ~= '' then
      local kids, rest
      if parts and how == 's' then
        -- (a failure that the workflow survives releases its dependents
        -- at once: its job is not left for a worker to run again)
        kids, rest = wfPart(ks, 1, #ks)
        if rest then
          -- where the rest begins, and where the list ended: dependents
          -- spawned after this end are appended to it, and counted it
          -- ended when they were (wf_spawn.lua); and the attempt that
          -- ended, for the rest's dependents it spawned (endKid)
          hset(WF.kids, step .. '>', rest .. ':' .. #ks .. ':' .. attempt)
          out[2] = 'part'
        end
      else
        kids = wfSplit(ks)
      end
      hload(WF.left, kids)
      hload(WF.state, kids)
      kept, rel = {}, {}
      for _, k in ipairs(kids) do
        local r = endKid(k, step, ns, attempt)
        if r == 'd' then
          dropped = dropped + 1
        else
          kept[#kept + 1] = k
          if r == 'r' then rel[#rel + 1] = k end
        end
      end
    end
    if rel and #rel > 0 then
      flush()
      if not (take and take(rel)) then wfReleaseMany(out, rel) end
    end
    if dropped > 0 then
      -- (a release in parts leaves the dropped in the list, whose bytes
      -- its mark counts: what reads the list later finds them gone)
      if out[2] ~= 'part' then hset(WF.kids, step, table.concat(kept, ',')) end
      redis.call('HINCRBY', KEYS[WF.meta], 'n', -dropped)
      closed(dropped)
    end
    if M.open <= 0 then
      M.st = 'ok'
      M.ended = true
      out[1] = 'ok'
      redis.call('HSET', KEYS[WF.meta], 'st', 'ok', 'end', now)
    end
    return out
  end

  -- more releases the next part of the dependents of step, whose
  -- release is in parts, and returns the reply: "part" while more are
  -- left, "ended" once none is (or when the workflow no longer runs:
  -- its waiting steps were dropped).
  local function more(step)
    local st, mark = M.st, step .. '>'
    local m = hget(WF.kids, mark)
    local at, stop, attempt = string.match(m or '', '^(%d+):(%d+):(%d+)$')
    if not at or st ~= 'run' then
      if m then hdel(WF.kids, mark) end
      return {st or 'gone', 'ended'}
    end
    local kids, rest = wfPart(hget(WF.kids, step), tonumber(at), tonumber(stop))
    hload(WF.left, kids)
    hload(WF.state, kids)
    local rel, ns, dropped = {}, #step, 0
    for _, k in ipairs(kids) do
      -- (a dependent step spawned is dropped if another attempt than
      -- the one that ended spawned it, as settle drops it)
      local r = endKid(k, step, ns, attempt)
      if r == 'r' then
        rel[#rel + 1] = k
      elseif r == 'd' then
        dropped = dropped + 1
      end
    end
    if dropped > 0 then
      redis.call('HINCRBY', KEYS[WF.meta], 'n', -dropped)
      closed(dropped)
      if M.open <= 0 then
        -- every step left was dropped: the workflow has succeeded
        M.st, M.ended, st = 'ok', true, 'ok'
        redis.call('HSET', KEYS[WF.meta], 'st', 'ok', 'end', now)
      end
    end
    local out = {st, 'part'}
    if rest then
      hset(WF.kids, mark, rest .. ':' .. stop .. ':' .. attempt)
    else
      hdel(WF.kids, mark)
      out[2] = 'ended'
    end
    if #rel > 0 then
      flush()
      if not (take and take(rel)) then wfReleaseMany(out, rel) end
    end
    return out
  end

  local S = {settle = settle, more = more}
  function S.close()
    flush()
    if M.dopen ~= 0 then redis.call('HINCRBY', KEYS[WF.meta], 'open', M.dopen) end
    if M.ended then wfExpire(M.ret) end
  end
  return S
end
