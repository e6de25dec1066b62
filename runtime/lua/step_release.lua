-- step_release: release the next part of a step's dependents, for a step
-- whose end released them in parts (step_ack.lua, lib/workflow_settle.lua
-- S.more): up to 1,000 of them, in the order the workflow lists them.
-- The steps it may push as they stand (lib/workflow_take.lua), when
-- ARGV[1] allows it, are pushed onto the queue in the same call
-- (lib/enqueue.lua), so a part is released and pushed at once. The
-- caller calls it again while its reply is "part", then acks the step's
-- job. Made again after a crash, a part released before is not released
-- again: where the rest begins moves in the call that releases it.
--
-- KEYS[1..9] -> the workflow's keys (lib/workflow.lua), in the queue's
--               slot
-- KEYS[10..13] -> the queue's ready list, delayed zset, payloads hash and
--               notify list, as lib/enqueue.lua takes them; none for a
--               workflow in a slot of its own, whose released steps the
--               caller pushes (ARGV[1] "0")
-- ARGV[1] -> "1" if the call may push released steps, "2" if it may and
--            is to list them (for the caller's events), "0" if not
-- ARGV[2] -> the step whose dependents are released
--
-- Returns: {pushed, reply}: reply is wf_settle.lua's, "part" while more
-- dependents are left, "ended" once none is; pushed is 1 if the steps it
-- lists were pushed by this call, 0 if they are for the caller to push.
--
-- Errors: "ERR step_release: ..." for arguments out of shape, "ERR
-- wf_settle: ..." for a step the workflow does not have, "WRONGTYPE ..."
-- for a key of another type. All are checked before the first write.

-- uses: wrong_type, now_ms, workflow, workflow_settle, workflow_take, groups, enqueue

if (#KEYS ~= 13 and not (#KEYS == 9 and ARGV[1] == '0')) or #ARGV ~= 2 or (ARGV[1] ~= '0' and ARGV[1] ~= '1' and ARGV[1] ~= '2') then
  return redis.error_reply('ERR step_release: want 13 keys (9 with the flag "0"), a flag and a step; nothing was written')
end
local push, tell, step = ARGV[1] ~= '0', ARGV[1] == '2', ARGV[2]
local bad = wfBad()
if bad then return bad end
local T = wfTaker()
local Q
if #KEYS == 13 then
  Q, bad = enqueueOpen(10, nil, T.ids, T.pays)
  if not Q then return bad end
end
local S
S, bad = wfSettleOpen({step}, push and T.take or nil, true)
if not S then return bad end

local r = S.more(step)
S.close()
local n = #T.ids
if n == 0 then return {0, r} end
Q.n = n
enqueueWrite(Q, nil)
if not tell then return {0, r} end
return {1, T.list(r, 0)}
