-- lib workflow_take: the take of released steps that a call pushes as
-- they stand, for step_ack.lua and step_release.lua (lib/workflow.lua's
-- keys, at WF).
--
-- wfTaker() returns T: T.ids and T.pays, the job IDs and payloads of the
-- steps taken, in order, for lib/enqueue.lua (enqueueOpen(b, nil, T.ids,
-- T.pays)); T.steps, their step IDs; and T.take(rel), which takes the
-- steps rel if each can be pushed as it stands, and returns true, or
-- takes none of them and returns false. A step can be if the job hash
-- holds its job ID ("<step>#", set only for a step of one parent that
-- needs no result and has no delay, group or tags). (193 is the first
-- byte of a job with a delay.) T.list(r, from) appends to the reply r the
-- steps taken after the first from, in the release form (ID, job, no
-- results), for a caller told of the steps a call pushed.
local function wfTaker()
  local T = {ids = {}, pays = {}, steps = {}}
  function T.take(rel)
    local ids, pays, steps = T.ids, T.pays, T.steps
    local fields, nr = {}, #rel
    for x = 1, nr do fields[x] = rel[x] .. '#' end
    local k = #ids
    for i = 1, nr, 1000 do
      local e = math.min(i + 999, nr)
      local got = redis.call('HMGET', KEYS[WF.job], unpack(fields, i, e))
      local jobs = redis.call('HMGET', KEYS[WF.job], unpack(rel, i, e))
      for x = 1, #got do
        local job = jobs[x]
        if not got[x] or type(job) ~= 'string' or string.byte(job, 1) == 193 then
          for y = k + 1, #ids do ids[y], pays[y], steps[y] = nil, nil, nil end
          return false
        end
        local at = k + i + x - 1
        ids[at], pays[at], steps[at] = got[x], job, rel[i + x - 1]
      end
    end
    return true
  end
  function T.list(r, from)
    local nr = #r
    for y = from + 1, #T.ids do
      r[nr + 1], r[nr + 2], r[nr + 3] = T.steps[y], T.pays[y], 0
      nr = nr + 3
    end
    return r
  end
  return T
end
