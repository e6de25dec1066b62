-- debounce: add a job to a queue's delayed set as the latest of a burst
-- of dispatches under one debounce key, trailing edge: the job runs once
-- the window has passed since the burst's last dispatch (or its max wait
-- since its first), with the latest dispatch's payload. The job is
-- written by lib/enqueue.lua, in its fair group if it has one.
--
-- KEYS[1] -> debounce record hash of the key: id (the job waiting for
--            the burst to end), first (Redis ms of the burst's first
--            dispatch)
-- KEYS[2..] -> the queue's keys, as lib/enqueue.lua takes them
-- ARGV[1] -> window in ms (at least 1)
-- ARGV[2] -> max wait in ms, counted from the burst's first dispatch (at
--            least the window)
-- ARGV[3] -> "1" if the payload is bound to its job ID (a sealed body):
--            it is written only under that ID
-- ARGV[4..] -> the job, as lib/enqueue.lua takes its jobs (one job; its
--            ID is used for a new burst)
--
-- Returns: {job ID, 1 if this dispatch started a new burst or 0 if it
-- replaced the waiting job's payload, due time in ms}; or, with ARGV[3]
-- "1", {ID, 2, 0} when the burst's job has another ID than the one the
-- payload is bound to (the caller binds it to ID and calls again), and
-- {"", 3, 0} when the job's ID is taken (the caller gives it a new one).
-- Nothing is written then.
--
-- While the record names a job still in the delayed set, a dispatch
-- replaces that job's payload and moves its due time to now + window,
-- but never past first + max wait: each dispatch extends the window, up
-- to the max wait. The job keeps its ID (and so its dispatch time),
-- which this dispatch returns. Otherwise (no record, or one whose job
-- has left the delayed set: it fell due, ran, or was removed) the
-- dispatch starts a new burst: the job is added, due after the window,
-- and the record names it.
--
-- The record expires at its job's due time (PEXPIREAT, on the Redis
-- clock that migrate compares due times with), which is when the job
-- leaves the window: so it is gone by the time the job runs, and no call
-- on the worker's side cleans it. A record whose job was removed early
-- is found stale by the next dispatch and replaced; it expires at its
-- due time at the latest.
--
-- Errors: "WRONGTYPE <key> ..." if a key it writes holds another type;
-- "DUPLICATE <id>" if the new burst's ID exists already with another
-- payload; ERR for a bad window, max wait or job. Nothing is written
-- then: every check comes before the first write.
--
-- A call sent again by the Redis client after its reply was lost finds
-- the record naming the job it added or changed, and writes the same
-- payload again.

-- uses: wrong_type, now_ms, groups, enqueue

local window = tonumber(ARGV[1])
local maxWait = tonumber(ARGV[2])
if not window or window < 1 or not maxWait or maxWait < window then
  return redis.error_reply('ERR debounce: want a window of at least 1 ms and a max wait of at least the window, got ' .. tostring(ARGV[1]) .. ' and ' .. tostring(ARGV[2]))
end
local bound = ARGV[3] == '1'
local Q, bad = enqueueOpen(2, 4)
if not Q then return bad end
if Q.n ~= 1 then
  return redis.error_reply('ERR debounce: want one job, got ' .. Q.n .. '; nothing was written')
end
-- The job's delay is the window: enqueueOpen checked the delayed set.
bad = wrongType({1, 'hash'})
if bad then return bad end

local now = nowMsUp()
local rec = redis.call('HMGET', KEYS[1], 'id', 'first')
local id, first = rec[1], tonumber(rec[2])
local fresh = not (id and first and redis.call('ZSCORE', KEYS[Q.b + 1], id))
if fresh then
  local payload
  id, payload = enqueueJob(Q, 1)
  first = now
  local have = redis.call('HGET', KEYS[Q.b + 2], id)
  if have and have ~= payload then
    if bound then return {'', 3, 0} end
    return redis.error_reply('DUPLICATE ' .. id)
  end
elseif bound and id ~= (enqueueJob(Q, 1)) then
  return {id, 2, 0}
end
local due = math.max(math.min(now + window, first + maxWait), now)
local dues = string.format('%d', due)
Q.ids, Q.at = {id}, {due}
enqueueWrite(Q, nil)
redis.call('HSET', KEYS[1], 'id', id, 'first', string.format('%d', first))
redis.call('PEXPIREAT', KEYS[1], dues)
local isNew = 0
if fresh then isNew = 1 end
return {id, isNew, due}
