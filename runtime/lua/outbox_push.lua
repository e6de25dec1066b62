-- outbox_push: push jobs relayed from an SQL outbox, each at most once.
--
-- A relay claims committed outbox rows, pushes their jobs here, then
-- deletes the rows. It can die between the push and the delete, after the
-- jobs ran and were acked, when their IDs are free again. So each job is
-- pushed under a mark, kept in the queue's relayed set until well after
-- its row is gone (outbox_release.lua): a job whose mark is there was
-- pushed already, and is skipped (docs/outbox.md).
--
-- KEYS[1] -> ready list
-- KEYS[2] -> delayed zset
-- KEYS[3] -> payloads hash
-- KEYS[4] -> notify list (doorbell)
-- KEYS[5] -> relayed zset: mark -> 1e15 + ms pushed while its row may
--            exist; ms the mark expires at, once the row is deleted
-- ARGV[1] -> deadline, Redis ms: a call that runs after it pushes nothing
-- ARGV[2..] -> quads: mark (outbox row ID, or row ID/job ID for a job of
--              a batch row), job ID, delay in ms, encoded envelope
--
-- Returns: {pushed, {marks skipped}, {marks refused}}. A mark is skipped
-- when it is in the relayed set: its job was pushed before. It is
-- refused when its job ID exists already in the queue with another
-- payload; its job is not pushed.
-- Errors: "LATE <now> <deadline>" after the deadline, and "WRONGTYPE <key>
-- ..." if a key it writes holds another type; nothing is written then.

-- uses: wrong_type, now_ms

local rung = redis.pcall('LLEN', KEYS[4])
if type(rung) == 'table' then return typeError(KEYS[4], 'list') or rung end
local bad = typeError(KEYS[1], 'list') or typeError(KEYS[2], 'zset') or
  typeError(KEYS[3], 'hash') or typeError(KEYS[5], 'zset')
if bad then return bad end

local now, us = nowMs()
local deadline = tonumber(ARGV[1])
if now > deadline then
  return redis.error_reply(string.format('LATE %d %d', now, deadline))
end
local due0 = now
if us > 0 then due0 = now + 1 end
local pending = string.format('%d', 1e15 + now)

-- Quads are read 250 at a time, so unpack never passes 1000 values.
local ready, delayed, payloads, marks = {}, {}, {}, {}
local nr, nd, np, nm = 0, 0, 0, 0
local skipped, refused, ns, nf = {}, {}, 0, 0
local seen = {}
local head = nil
for s = 2, #ARGV, 1000 do
  local ms, ids, k = {}, {}, 0
  for i = s, math.min(s + 999, #ARGV), 4 do
    k = k + 1
    ms[k], ids[k] = ARGV[i], ARGV[i + 1]
  end
  local scores = redis.call('ZMSCORE', KEYS[5], unpack(ms))
  local found = redis.call('HMGET', KEYS[3], unpack(ids))
  for j = 1, k do
    local i = s + 4 * (j - 1)
    local mark, id, delay, payload = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
    local have = found[j] or seen[id]
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
        np = np + 2
        payloads[np - 1], payloads[np] = id, payload
        if delay > 0 then
          local due = due0 + delay
          if not head or due < head then head = due end
          nd = nd + 2
          delayed[nd - 1], delayed[nd] = string.format('%d', due), id
        else
          nr = nr + 1
          ready[nr] = id
        end
      end
    end
  end
end

-- Writes, after every check. Marks released long enough ago go first.
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
local first = nil
if nd > 0 then
  first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
end
local function each(t, n, step, f)
  for s = 1, n, step do
    f(unpack(t, s, math.min(s + step - 1, n)))
  end
end
each(payloads, np, 1000, function(...) redis.call('HSET', KEYS[3], ...) end)
each(marks, nm, 1000, function(...) redis.call('ZADD', KEYS[5], ...) end)
each(ready, nr, 1000, function(...) redis.call('RPUSH', KEYS[1], ...) end)
each(delayed, nd, 1000, function(...) redis.call('ZADD', KEYS[2], ...) end)

local ringNow = nr > 0 or (nd > 0 and (first[2] == nil or head < tonumber(first[2])))
if ringNow and rung == 0 then
  redis.call('RPUSH', KEYS[4], '1')
end
return {np / 2, skipped, refused}
