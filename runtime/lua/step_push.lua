-- step_push: push released steps of a workflow onto their queue, each
-- once, ready, delayed by its delay, or into its fair group
-- (lib/enqueue.lua). A step is released in its workflow's slot
-- (wf_settle.lua) before this call, in the queue's slot: made again for
-- a step pushed before (its marker is set, or its ID is queued), it
-- pushes nothing for that step, so a release made again after a crash
-- is not pushed twice. A workflow in the queue's slot has steps pushed by
-- the call that released them (step_ack.lua, step_release.lua), which
-- sets no marker: the call is then given the workflow's states, and
-- pushes no step whose state is not released ("q"). So a step that ran
-- and ended between a release listed again (its parent's job run again,
-- after its lease was lost) and this call is not pushed a second time.
-- A step the workflow no longer has (it expired) is pushed, and fails
-- when it runs, naming why.
--
-- KEYS[1..n] -> each step's marker string (keyspace Chained, same slot
--               as the queue), in the order of the jobs
-- KEYS[n+1] -> with ARGV[3] "1" only: the workflow's state hash (lib/
--               workflow.lua), in the queue's slot
-- KEYS[n+1..] or KEYS[n+2..] -> the queue's keys, as lib/enqueue.lua
--               takes them
-- ARGV[1] -> n, the number of steps
-- ARGV[2] -> marker lifetime in ms
-- ARGV[3] -> "1" if the workflow's states follow, "0" if not
-- ARGV[4..3+n] -> with ARGV[3] "1" only: each step's ID in its workflow
-- then -> the steps, as lib/enqueue.lua takes its jobs
--
-- Returns: the number of steps pushed.
--
-- Errors: "ERR enqueue: ..." for malformed steps, "ERR step_push: ..."
-- when the markers and steps differ in number, "WRONGTYPE <key> ..." if
-- a queue key holds another type (a marker of another type counts as
-- none, and is replaced). All are checked before the first write: it
-- writes nothing then.

-- uses: wrong_type, groups, enqueue

local n, check = tonumber(ARGV[1]), ARGV[3] == '1'
if not n or n < 1 or (not check and ARGV[3] ~= '0') or (check and ARGV[3 + n] == nil) then
  return redis.error_reply('ERR step_push: want the number of steps, a marker lifetime, the flag "0", or "1" and the steps\' IDs; nothing was written')
end
local Q, bad
if check then
  Q, bad = enqueueOpen(n + 2, 4 + n)
else
  Q, bad = enqueueOpen(n + 1, 4)
end
if not Q then return bad end
if Q.n ~= n then
  return redis.error_reply('ERR step_push: ' .. n .. ' markers for ' .. Q.n .. ' steps; nothing was written')
end
bad = check and typeError(KEYS[n + 1], 'hash')
if bad then return bad end
-- markers, payloads and states are read 1000 a call
local found, marks, states = enqueueFresh(Q, true), {}, {}
for s = 1, n, 1000 do
  local e = math.min(s + 999, n)
  local m = redis.call('MGET', unpack(KEYS, s, e))
  local st = check and redis.call('HMGET', KEYS[n + 1], unpack(ARGV, 3 + s, 3 + e))
  for i = 1, #m do
    marks[s + i - 1] = m[i]
    states[s + i - 1] = not st or not st[i] or st[i] == 'q'
  end
end
local pick = {}
for i = 1, n do
  if not marks[i] and not found[i] and states[i] then pick[#pick + 1] = i end
end
if #pick == 0 then return 0 end
for _, i in ipairs(pick) do
  redis.call('SET', KEYS[i], '1', 'PX', tonumber(ARGV[2]))
end
return enqueueWrite(Q, pick)
