-- wf_settle: record the end of a step's run, and release the dependents
-- it was the last parent of. The worker calls it before it acks the
-- step's job; made again (the worker died before the ack, and the job
-- ran again), it changes nothing and returns the step's released
-- dependents again, whose pushes are idempotent (step_push.lua).
--
-- The ends of several steps of one workflow come in one call, the ends
-- its workers' steps reached while the call before was in flight; each
-- is recorded in turn, as if by a call of its own.
--
-- KEYS[1..9] -> the workflow's keys (lib/workflow.lua)
-- ARGV -> per step, 5 values (at most 500 steps):
--   the step's ID
--   outcome: s (succeeded), f (failed for good), or r (look only: the
--     step is about to run again)
--   the attempt that ended (steps it spawned in an earlier attempt are
--     dropped)
--   its result, "" for none
--   why it failed, for a failure
--
-- Returns: per step, in order, {workflow state (run, ok, failed,
-- cancelled, or gone if the workflow is not there), what happened, then
-- steps}:
--   "ended" (this call ended the step), "again" (the step had ended
--   before), or "wait" (a look: the step has not ended): then per
--   released dependent not ended, its release (lib/workflow.lua)
--   "part": as "ended" or "again", for a success with more than 1,000
--   dependents, which releases them in parts (lib/workflow_settle.lua):
--   the first here, the rest by the caller with step_release.lua,
--   before it acks the step's job
--   "failed": this call failed the workflow (or, for a failure made
--   again by the step that failed it, the catch has not run yet: meta
--   caught is not set, WfCaught): then per released step its ID and
--   job, for the caller to cancel
--   "dropped": the step was dropped (its workflow failed or was
--   cancelled): nothing follows
--
-- Errors: "ERR wf_settle: ..." for arguments out of shape or a step the
-- workflow does not have; "WRONGTYPE ..." for a key of another type.
-- Both are checked before the first write.

-- uses: wrong_type, now_ms, workflow, workflow_settle

local bad = wfBad()
if bad then return bad end
local n = #ARGV / 5
if n < 1 or n > 500 or n ~= math.floor(n) then
  return redis.error_reply('ERR wf_settle: want 1 to 500 steps of a step, an outcome, an attempt, a result and a reason each')
end
for j = 0, n - 1 do
  local how = ARGV[5 * j + 2]
  if how ~= 's' and how ~= 'f' and how ~= 'r' then
    return redis.error_reply('ERR wf_settle: step ' .. ARGV[5 * j + 1] .. ': outcome ' .. tostring(how) .. ', not s, f or r')
  end
end

local steps = {}
for j = 0, n - 1 do steps[j + 1] = ARGV[5 * j + 1] end
local S, err = wfSettleOpen(steps, nil, true)
if not S then return err end
local replies = {}
for j = 0, n - 1 do
  local a = 5 * j
  replies[j + 1] = S.settle(ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5])
end
S.close()
return replies
