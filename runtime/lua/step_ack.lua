-- step_ack: record the success of workflow steps and ack their jobs, in
-- one call. A workflow whose steps all run on one queue keeps its keys in
-- that queue's slot (its ID begins "{<queue>}", keyspace.WorkflowHome),
-- so the end of a step run on that queue is recorded as wf_settle.lua
-- records it (lib/workflow_settle.lua), and its job deleted as ack.lua
-- deletes it, at once: a worker that dies between the two leaves neither
-- done.
--
-- A step whose end releases only steps the call may push as they stand
-- (one parent, no results to hand them, no delay, group or tags, on this
-- queue: the job hash holds their job IDs, "<step>#", and their jobs are
-- the payloads) has them pushed onto the queue in the same call
-- (lib/enqueue.lua), when ARGV[1] allows it, and is acked.
--
-- A step whose end calls for more than that (it released dependents, for
-- the caller to push; it failed its workflow, for the caller to cancel
-- the released steps and run the catch) is recorded and not acked: the
-- caller does what follows, then acks it with ack.lua, as after
-- wf_settle. Made again (the caller died in between, and the job ran
-- again), its record is "again" and hands back the same steps, whose
-- pushes are idempotent (step_push.lua). A step pushed by this call has
-- one parent, whose job this call acks: no record made again hands it
-- back.
--
-- KEYS[1] -> reserved zset
-- KEYS[2] -> state hash (job ID -> "attempts:exceptions:token")
-- KEYS[3] -> errors hash: the jobs acked lose their entries
-- KEYS[4..] -> per workflow, its 9 keys (lib/workflow.lua), all in the
--              queue's slot
-- the last 4 -> the queue's ready list, delayed zset, payloads hash and
--              notify list, as lib/enqueue.lua takes them
-- ARGV[1] -> "1" if the call may push released steps, "2" if it may and
--            is to list them (for the caller's events), "0" if not (the
--            caller's dispatch middleware must see each push)
-- ARGV[2..] -> per job, 6 values (at most 500 jobs): the index of its
--   workflow (1 for the first 9 keys after KEYS[3]), its ID, its
--   reservation token, its step's ID, the attempt that succeeded, and
--   its result ("" for none)
--
-- Returns: per job, in order, {0} if its token is stale (nothing is done
-- for it); {1, reply} if its end was recorded and the job acked, or 1
-- alone when reply is {"run", "ended"}; {2, reply} if its end was
-- recorded and the job is left for the caller to ack, once it has done
-- what the reply asks; {3, reply} if it was acked and the steps reply
-- lists were pushed by this call (with ARGV[1] "2"); {4, reply} if its
-- end was recorded, and its job is left as for 2, with the steps reply
-- lists pushed by this call (with ARGV[1] "2"). Otherwise reply is
-- wf_settle.lua's for the step, without the steps this call pushed, or
-- "part" in place of "ended": a step with more than 1,000 dependents
-- releases them in parts (lib/workflow_settle.lua); this
-- call releases the first, and the caller the rest, with
-- step_release.lua, before it acks the job.
--
-- Errors: "ERR step_ack: ..." for arguments out of shape, "ERR
-- wf_settle: ..." for a step its workflow does not have, "WRONGTYPE ..."
-- for a key of another type. All are checked before the first write.

-- uses: wrong_type, now_ms, workflow, workflow_settle, workflow_take, groups, enqueue

local m, n = (#KEYS - 7) / 9, (#ARGV - 1) / 6
if m < 1 or m ~= math.floor(m) or n < 1 or n > 500 or n ~= math.floor(n) or (ARGV[1] ~= '0' and ARGV[1] ~= '1' and ARGV[1] ~= '2') then
  return redis.error_reply('ERR step_ack: want 3 keys, 9 a workflow and the queue\'s 4, a flag, and 1 to 500 jobs of 6 values each; nothing was written')
end
local b = #KEYS - 3 -- the queue's ready list, then delayed, payloads, notify
local bad = wrongType({1, 'zset', 2, 'hash'})
if bad then return bad end
-- the queue, opened for the steps to push (it checks their keys' types)
local T = wfTaker()
local pushed, pays = T.ids, T.pays
local Q
Q, bad = enqueueOpen(b, nil, pushed, pays)
if not Q then return bad end
local push, tell = ARGV[1] ~= '0', ARGV[1] == '2'
-- (tonumber costs more than the rest of a job's checks: a call of one
-- workflow, the common one, is told by its text)
local ids, ws = {}, {}
for j = 1, n do
  local w = ARGV[6 * j - 4]
  w = w == '1' and 1 or tonumber(w)
  if not w or w < 1 or w > m or w ~= math.floor(w) then
    return redis.error_reply('ERR step_ack: job ' .. tostring(ARGV[6 * j - 3]) .. ': workflow ' .. tostring(ARGV[6 * j - 4]) .. ' of ' .. m .. '; nothing was written')
  end
  ids[j], ws[j] = ARGV[6 * j - 3], w
end
for w = 1, m do
  wfAt(3 + 9 * (w - 1))
  bad = wfBad()
  if bad then return bad end
end

-- Only the jobs still held under their token are settled.
local states = redis.call('HMGET', KEYS[2], unpack(ids))
local mine, steps, order = {}, {}, {}
for j = 1, n do
  local st = states[j]
  if st and string.match(st, '^%d+:%d+:(.+)$') == ARGV[6 * j - 2] then
    local w = ws[j]
    mine[j] = w
    local sw = steps[w]
    if not sw then
      sw = {}
      steps[w] = sw
      order[#order + 1] = w
    end
    sw[#sw + 1] = ARGV[6 * j - 1] -- its step
  end
end
local errs = #order > 0 and redis.call('TYPE', KEYS[3]).ok
if errs and errs ~= 'none' and errs ~= 'hash' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[3] .. ' holds a ' .. errs .. ', not a hash; nothing was written')
end
local S = {}
for _, w in ipairs(order) do
  wfAt(3 + 9 * (w - 1))
  local s, err = wfSettleOpen(steps[w], push and T.take or nil, true)
  if not s then return err end
  S[w] = s
end

local out, done = {}, {}
for _, w in ipairs(order) do
  wfAt(3 + 9 * (w - 1))
  for j = 1, n do
    if mine[j] == w then
      local a, k = 6 * j - 4, #pushed
      local r = S[w].settle(ARGV[a + 3], 's', ARGV[a + 4], ARGV[a + 5], '')
      local what = r[2]
      if #r == 2 and (what == 'ended' or what == 'again' or what == 'dropped') then
        if tell and #pushed > k then
          -- the steps its end released, which this call pushes
          out[j] = {3, T.list(r, k)}
        else
          -- (1 alone for the most common reply: the step ended, the
          -- workflow runs on)
          out[j] = (what == 'ended' and r[1] == 'run') and 1 or {1, r}
        end
        done[#done + 1] = ids[j]
      elseif what == 'part' and #r == 2 and tell and #pushed > k then
        -- the first part of a release in parts, pushed by this call
        out[j] = {4, T.list(r, k)}
      else
        out[j] = {2, r}
      end
    end
  end
  S[w].close()
end
for j = 1, n do
  if not out[j] then out[j] = {0} end
end
if #done > 0 then
  redis.call('ZREM', KEYS[1], unpack(done))
  redis.call('HDEL', KEYS[2], unpack(done))
  redis.call('HDEL', KEYS[b + 2], unpack(done))
  if errs == 'hash' then redis.call('HDEL', KEYS[3], unpack(done)) end
end
if #pushed > 0 then
  Q.n = #pushed
  enqueueWrite(Q, nil)
end
return out
