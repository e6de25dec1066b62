-- push: add new jobs to a queue, ready, delayed, or each at the back of
-- its fair group, and ring the queue's doorbell (lib/enqueue.lua). Every
-- Dispatch, DispatchMany, PushMany, PushRaw, batch and listener job
-- enters its queue through this call.
--
-- KEYS[1] -> calls hash of the span of time the call was made in (nonce or
--            token -> what the call did)
-- KEYS[2..] -> the queue's keys, as lib/enqueue.lua takes them: ready,
--            delayed, payloads, notify, and for grouped jobs reserved and
--            the group keys
-- ARGV[1] -> how long to keep the calls hash after its first write, in ms
--            (0: record nothing)
-- ARGV[2] -> nonce of this call (random, from the caller)
-- ARGV[3..] -> the jobs, as lib/enqueue.lua takes them
--
-- Returns: the number of jobs pushed.
-- Errors: "DUPLICATE <id>" if a job ID exists already with another
-- payload; nothing is pushed then. A job that exists with the same
-- payload is skipped: that is this very push, made again. A job ID named
-- twice in this call is held to the same rules, against its first pair.
-- "ERR enqueue: ..." for malformed jobs, and "WRONGTYPE <key> ..." if a
-- key it writes holds another type; nothing is written then.
--
-- Redis keeps what a script wrote before a command of it failed, so
-- everything is checked before the first write. Skipping a job that
-- exists with the same payload is right only because a push never leaves
-- a payload without its ID in the queue.
--
-- The Redis client sends a call again when the connection broke before
-- its reply came. By then the jobs of the first run may have run and been
-- acked, so that their IDs are free again: the call records its nonce
-- first, and a run that finds it there pushes nothing and returns 0.

local keep = tonumber(ARGV[1])
local nonce = ARGV[2]

-- uses: wrong_type, call_record, groups, enqueue

local Q, bad = enqueueOpen(2, 3)
if not Q then return bad end

if Q.n == 1 then
  -- One job, the most common call: HSETNX both checks the ID and writes
  -- the payload, after the call's record, the first write.
  local recorded = recordCall(KEYS[1], nonce, keep)
  if recorded then return recorded end
  local id, payload = enqueueJob(Q, 1)
  if redis.call('HSETNX', KEYS[Q.b + 2], id, payload) == 0 then
    if redis.call('HGET', KEYS[Q.b + 2], id) == payload then return 0 end
    -- Nothing is pushed, so a retry must be refused as well.
    if keep > 0 then redis.call('HDEL', KEYS[1], nonce) end
    return redis.error_reply('DUPLICATE ' .. id)
  end
  Q.stored = true
  return enqueueWrite(Q, nil)
end

-- An ID the call names twice meets the rules of an ID that exists
-- already, against its first job.
local pick, dup = enqueueFresh(Q)
if pick == false then return redis.error_reply('DUPLICATE ' .. dup) end

local recorded = recordCall(KEYS[1], nonce, keep)
if recorded then return recorded end
return enqueueWrite(Q, pick)
