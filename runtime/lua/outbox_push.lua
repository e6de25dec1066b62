-- outbox_push: push jobs relayed from an SQL outbox, each at most once,
-- through lib/enqueue.lua, each ready, delayed or into its fair group.
--
-- A relay claims committed outbox rows, pushes their jobs here, then
-- deletes the rows. It can die between the push and the delete, after the
-- jobs ran and were acked, when their IDs are free again. So each job is
-- pushed under a mark, kept in the queue's relayed set until well after
-- its row is gone (outbox_release.lua): a job whose mark is there was
-- pushed already, and is skipped (docs/outbox.md).
--
-- KEYS[1] -> relayed zset: mark -> 1e15 + ms pushed while its row may
--            exist; ms the mark expires at, once the row is deleted
-- KEYS[2..] -> the queue's keys, as lib/enqueue.lua takes them
-- ARGV[1] -> deadline, Redis ms: a call that runs after it pushes nothing
-- ARGV[2] -> n, the number of jobs (at most 500)
-- ARGV[3..2+n] -> each job's mark (outbox row ID, or row ID/job ID for a
--              job of a batch row), in the order of the jobs
-- ARGV[3+n..] -> the jobs, as lib/enqueue.lua takes them
--
-- Returns: {pushed, {marks skipped}, {marks refused}}. A mark is skipped
-- when it is in the relayed set: its job was pushed before. It is
-- refused when its job ID exists already in the queue with another
-- payload; its job is not pushed.
-- Errors: "LATE <now> <deadline>" after the deadline, "ERR ..." for
-- malformed jobs, and "WRONGTYPE <key> ..." if a key it writes holds
-- another type; nothing is written then.

-- uses: wrong_type, now_ms, groups, enqueue

local m = tonumber(ARGV[2])
if not m or m < 0 or m > 500 then
  return redis.error_reply('ERR outbox_push: want a count of up to 500 marks, got ' .. tostring(ARGV[2]) .. '; nothing was written')
end
local Q, bad = enqueueOpen(2, 3 + m)
if not Q then return bad end
if Q.n ~= m then
  return redis.error_reply('ERR outbox_push: ' .. m .. ' marks for ' .. Q.n .. ' jobs; nothing was written')
end
bad = wrongType({1, 'zset'})
if bad then return bad end

local now = nowMs()
local deadline = tonumber(ARGV[1])
if now > deadline then
  return redis.error_reply(string.format('LATE %d %d', now, deadline))
end
local pending = string.format('%d', 1e15 + now)

local marks, nm = {}, 0
local pick, np = {}, 0
local skipped, refused, ns, nf = {}, {}, 0, 0
local seen = {}
local found = enqueueFresh(Q, true)
for s = 1, m, 1000 do
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(ARGV, 3 + s - 1, 3 + math.min(s + 999, m) - 1))
  for j = 1, #scores do
    local i = s + j - 1
    local mark = ARGV[2 + i]
    local id, payload = enqueueJob(Q, i)
    local have = found[i] or seen[id]
    if scores[j] or seen[mark] then
      ns = ns + 1
      skipped[ns] = mark
    elseif have and have ~= payload then
      nf = nf + 1
      refused[nf] = mark
    else
      seen[mark] = true
      nm = nm + 2
      marks[nm - 1], marks[nm] = pending, mark
      if not have then
        seen[id] = payload
        np = np + 1
        pick[np] = i
      end
    end
  end
end

-- Writes, after every check. Marks released long enough ago go first.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for s = 1, nm, 1000 do
  redis.call('ZADD', KEYS[1], unpack(marks, s, math.min(s + 999, nm)))
end
enqueueWrite(Q, pick)
return {np, skipped, refused}
