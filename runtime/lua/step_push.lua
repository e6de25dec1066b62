-- step_push: push released steps of a workflow onto their queue, each
-- once, ready, delayed by its delay, or into its fair group
-- (lib/enqueue.lua). A step is released in its workflow's slot
-- (wf_settle.lua) before this call, in the queue's slot: made again for
-- a step pushed before (its marker is set, or its ID is queued), it
-- pushes nothing for that step, so a release made again after a crash
-- is not pushed twice.
--
-- KEYS[1..n] -> each step's marker string (keyspace Chained, same slot
--               as the queue), in the order of the jobs
-- KEYS[n+1..] -> the queue's keys, as lib/enqueue.lua takes them
-- ARGV[1] -> n, the number of steps
-- ARGV[2] -> marker lifetime in ms
-- ARGV[3..] -> the steps, as lib/enqueue.lua takes its jobs
--
-- Returns: the number of steps pushed.
--
-- Errors: "ERR enqueue: ..." for malformed steps, "ERR step_push: ..."
-- when the markers and steps differ in number, "WRONGTYPE <key> ..." if
-- a queue key holds another type (a marker of another type counts as
-- none, and is replaced). All are checked before the first write: it
-- writes nothing then.

-- uses: wrong_type, groups, enqueue

local n = tonumber(ARGV[1])
if not n or n < 1 then
  return redis.error_reply('ERR step_push: want the number of steps first; nothing was written')
end
local Q, bad = enqueueOpen(n + 1, 3)
if not Q then return bad end
if Q.n ~= n then
  return redis.error_reply('ERR step_push: ' .. n .. ' markers for ' .. Q.n .. ' steps; nothing was written')
end
-- markers and payloads are read 1000 a call
local found, marks = enqueueFresh(Q, true), {}
for s = 1, n, 1000 do
  local m = redis.call('MGET', unpack(KEYS, s, math.min(s + 999, n)))
  for i = 1, #m do marks[s + i - 1] = m[i] end
end
local pick = {}
for i = 1, n do
  if not marks[i] and not found[i] then pick[#pick + 1] = i end
end
if #pick == 0 then return 0 end
for _, i in ipairs(pick) do
  redis.call('SET', KEYS[i], '1', 'PX', tonumber(ARGV[2]))
end
return enqueueWrite(Q, pick)
