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

-- uses: wrong_type, now_ms, workflow

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
local exists = redis.call('EXISTS', KEYS[WF.meta]) == 1
for j = 0, n - 1 do
  if exists and not redis.call('HGET', KEYS[WF.state], ARGV[5 * j + 1]) then
    return redis.error_reply('ERR wf_settle: workflow has no step ' .. ARGV[5 * j + 1])
  end
end
local now = nowMs()
-- the workflow's state, policy and deadline, read once a call; a step
-- that ends the workflow updates M.st
local M = redis.call('HMGET', KEYS[WF.meta], 'st', 'pol', 'dl')
M = {st = M[1], pol = M[2], dl = tonumber(M[3])}

local function settle(step, how, attempt, result, why)
  local st = M.st
  if not st then return {'gone', 'dropped'} end
  local cur = redis.call('HGET', KEYS[WF.state], step)
  if not cur then return {st, 'dropped'} end -- dropped by a step before it in this call

  -- released dependents of step, not ended, for a step that ended before
  local function again(tag)
    local out = {st, tag}
    if st ~= 'run' then return out end
    for _, k in ipairs(wfSplit(redis.call('HGET', KEYS[WF.kids], step))) do
      if redis.call('HGET', KEYS[WF.state], k) == 'q' then wfRelease(out, k) end
    end
    return out
  end

  if cur == 'x' then return {st, 'dropped'} end
  if cur == 'f' and st == 'failed' and how == 'f' and redis.call('HGET', KEYS[WF.meta], 'failer') == step
    and not redis.call('HGET', KEYS[WF.meta], 'caught') then
    -- this step failed the workflow, and the catch has not run: the
    -- worker died in between; its failure, made again, runs it
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
  if cur == 's' or cur == 'f' then return again('again') end
  if how == 'r' then
    if st ~= 'run' then return {st, 'dropped'} end
    return {st, 'wait'}
  end
  if st == 'run' and M.dl > 0 and now > M.dl then
    local out = {'failed', 'failed'}
    wfEnd('failed', 'deadline', now, out)
    M.st = 'failed'
    -- the step's own outcome is still recorded below
    if how == 's' then
      redis.call('HSET', KEYS[WF.state], step, 's')
      if result ~= '' then redis.call('HSET', KEYS[WF.res], step, result) end
    else
      redis.call('HSET', KEYS[WF.state], step, 'f')
    end
    redis.call('HINCRBY', KEYS[WF.meta], 'open', -1)
    return out
  end

  local survives = how == 's' or M.pol == 'c' or redis.call('SISMEMBER', KEYS[WF.cont], step) == 1
  if not survives then
    redis.call('HSET', KEYS[WF.state], step, 'f')
    redis.call('HINCRBY', KEYS[WF.meta], 'open', -1)
    if st ~= 'run' then return {st, 'dropped'} end
    local out = {'failed', 'failed'}
    wfEnd('failed', 'step ' .. step .. ': ' .. why, now, out)
    M.st = 'failed'
    redis.call('HSET', KEYS[WF.meta], 'failer', step)
    return out
  end

  redis.call('HSET', KEYS[WF.state], step, how)
  if how == 's' and result ~= '' then redis.call('HSET', KEYS[WF.res], step, result) end
  local open = redis.call('HINCRBY', KEYS[WF.meta], 'open', -1)
  local out = {st, 'ended'}
  if st ~= 'run' then return out end
  local prefix = step .. '.'
  local kept, dropped = {}, 0
  for _, k in ipairs(wfSplit(redis.call('HGET', KEYS[WF.kids], step))) do
    local g = string.sub(k, 1, #prefix) == prefix and redis.call('HGET', KEYS[WF.gen], k)
    if g and g ~= attempt then
      -- spawned by an attempt that failed: the attempt that ended spawned
      -- its own
      for kk = 1, 9 do
        if kk == WF.cont then redis.call('SREM', KEYS[kk], k)
        elseif kk ~= WF.meta then redis.call('HDEL', KEYS[kk], k) end
      end
      dropped = dropped + 1
    else
      kept[#kept + 1] = k
      if redis.call('HINCRBY', KEYS[WF.left], k, -1) <= 0 and redis.call('HGET', KEYS[WF.state], k) == 'w' then
        redis.call('HSET', KEYS[WF.state], k, 'q')
        wfRelease(out, k)
      end
    end
  end
  if dropped > 0 then
    redis.call('HSET', KEYS[WF.kids], step, table.concat(kept, ','))
    redis.call('HINCRBY', KEYS[WF.meta], 'n', -dropped)
    open = redis.call('HINCRBY', KEYS[WF.meta], 'open', -dropped)
  end
  if open <= 0 then
    redis.call('HSET', KEYS[WF.meta], 'st', 'ok', 'end', now)
    M.st = 'ok'
    out[1] = 'ok'
    wfExpire(tonumber(redis.call('HGET', KEYS[WF.meta], 'ret')))
  end
  return out
end

local replies = {}
for j = 0, n - 1 do
  local a = 5 * j
  replies[j + 1] = settle(ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5])
end
return replies
