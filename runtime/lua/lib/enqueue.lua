-- lib enqueue: the one step that puts new jobs into a queue. Every
-- script that adds a job to a queue calls it (push, chain_push,
-- outbox_push, schedule_tick, debounce, retry), and no other script
-- writes a job to a ready list or a delayed set but to move one that is
-- already there (migrate, release, unreserve).
--
-- For each job it writes the payload, then puts the job ready at the
-- back of the queue, or delayed until its due time, or, for a job of a
-- fair group, at the back of its group (lib/groups.lua; a delayed one
-- goes into its group when it falls due); and it rings the queue's
-- doorbell once, when a job is ready or falls due before every job
-- delayed before.
--
-- The queue's keys come in through KEYS from index b (rdb.Enqueue):
--   b       -> ready list
--   b + 1   -> delayed zset
--   b + 2   -> payloads hash
--   b + 3   -> notify list (doorbell)
--   b + 4   -> reserved zset        } only for a call that holds
--   b + 5.. -> of, wait, ring, active, } grouped jobs
--              seq, running
-- Its jobs come in through ARGV from index a:
--   a      -> n, the number of jobs (at most 500)
--   a + 1  -> width: 2 (ID, payload), 3 (ID, payload, group) or 4 (ID,
--             payload, delay ms, group)
--   a + 2  -> the delay in ms of every job, for widths 2 and 3
--   a + 3.. -> n jobs of width values each; a group is "<limit>:<group>"
--             (limit 0 for none; no NUL in the group), "" for no group.
-- A script that takes its jobs from elsewhere (retry) fills Q.ids and
-- Q.payloads itself.
--
-- Two options of a job are not written here. The choice of partition is
-- the caller's: the keys it passes are the partition's. A unique job's
-- lock is taken before the push, by lock.lua, and given back if the push
-- fails: its key (keyspace Unique) is named by the job's unique key, not
-- its queue, so it lives in a slot of its own on a cluster and cannot be
-- written by a script of the queue's slot.
--
-- enqueueQueue(b) returns an empty Q on the keys from b, for a script
-- that fills Q.ids, Q.payload and Q.n itself; enqueueCheck(Q, delayed)
-- then checks the keys, as enqueueOpen does.
-- enqueueOpen(b, a) returns Q, the queue and its jobs, or nil and an
-- error reply for malformed jobs or a key of another type. It writes
-- nothing: scripts call it before their first write. It reads the
-- doorbell once, for the ring.
-- enqueueFound(Q) returns the payloads stored under the jobs' IDs (false
-- for none), for scripts that check IDs before writing.
-- enqueueWrite(Q, pick) writes the jobs whose indexes pick lists, in
-- order, or every job when pick is nil; Q.at[i], when a script set it,
-- is job i's due time in Redis ms, in place of now + its delay. It
-- returns the number written.
--
-- Uses wrong_type, now_ms and groups, which the script names before it.

local function enqueueQueue(b, n)
  local Q = {b = b, ready = KEYS[b], delayed = KEYS[b + 1], payloads = KEYS[b + 2], notify = KEYS[b + 3],
    ids = {}, payload = {}, delays = {}, cgs = {}, at = {}, n = n or 0}
  if KEYS[b + 10] then
    Q.G = {reserved = b + 4, of = b + 5, wait = b + 6, ring = b + 7, active = b + 8, seq = b + 9, running = b + 10, ready = b}
  end
  return Q
end

-- enqueueCheck(Q, delayed) checks the types of the keys a write may
-- touch, the delayed set only when delayed or a job has a delay.
local function enqueueCheck(Q, delayed)
  local rung = redis.pcall('LLEN', Q.notify)
  if type(rung) == 'table' then return typeError(Q.notify, 'list') or rung end
  Q.rung = rung
  local b = Q.b
  for i = 1, Q.n do
    if Q.delays[i] and Q.delays[i] > 0 then delayed = true end
  end
  return wrongType({b, 'list', b + 2, 'hash'}) or (delayed and wrongType({b + 1, 'zset'})) or
    (Q.G and (groupsBad(Q.G) or wrongType({b + 4, 'zset'})))
end

local function enqueueOpen(b, a)
  local n, width, delay = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  if not n or n < 0 or n > 500 or not (width == 2 or width == 3 or width == 4) or not delay or delay < 0
    or #ARGV < a + 2 + n * width then
    return nil, redis.error_reply('ERR enqueue: want a count of up to 500 jobs, a width of 2, 3 or 4, a delay of 0 or more ms and the jobs, from ARGV[' .. a .. ']; nothing was written')
  end
  local Q = enqueueQueue(b, n)
  for i = 1, n do
    local j = a + 3 + (i - 1) * width
    Q.ids[i], Q.payload[i] = ARGV[j], ARGV[j + 1]
    local d, cg = delay, false
    if width == 4 then
      d, cg = tonumber(ARGV[j + 2]), ARGV[j + 3]
      if not d or d < 0 then
        return nil, redis.error_reply('ERR enqueue: job ' .. ARGV[j] .. ' has the delay "' .. tostring(ARGV[j + 2]) .. '", not 0 or more ms; nothing was written')
      end
    elseif width == 3 then
      cg = ARGV[j + 2]
    end
    if cg == '' then cg = false end
    if cg then
      local l, g = string.match(cg, '^(%d+):(.*)$')
      if not l or #l > 9 or string.find(g, '\0', 1, true) then
        return nil, redis.error_reply('ERR enqueue: group of job ' .. ARGV[j] .. ' is "' .. cg .. '", not "<limit>:<group>" with no NUL in the group; nothing was written')
      end
      if not Q.G then
        return nil, redis.error_reply('ERR enqueue: job ' .. ARGV[j] .. ' has a group, and the call no group keys; nothing was written')
      end
    end
    Q.delays[i], Q.cgs[i] = d, cg
  end
  local bad = enqueueCheck(Q, false)
  if bad then return nil, bad end
  return Q
end

local function enqueueFound(Q)
  local found, n = {}, 0
  for s = 1, Q.n, 1000 do
    local part = redis.call('HMGET', Q.payloads, unpack(Q.ids, s, math.min(s + 999, Q.n)))
    for i = 1, #part do
      n = n + 1
      found[n] = part[i]
    end
  end
  return found
end

local function enqueueWrite(Q, pick)
  if not pick then
    pick = {}
    for i = 1, Q.n do pick[i] = i end
  end
  local k = #pick
  if k == 0 then return 0 end
  -- The clock is read only for a delay, and rounded up, so a job never
  -- falls due early: migrate moves it once the clock, rounded down, has
  -- reached its due time.
  local now = nil
  local head = nil
  local pairs_, ready, nr, grouped, gcgs, ng, delayed, nd, of, no = {}, {}, 0, {}, {}, 0, {}, 0, {}, 0
  local soonest = nil
  for x = 1, k do
    local i = pick[x]
    local id = Q.ids[i]
    pairs_[2 * x - 1], pairs_[2 * x] = id, Q.payload[i]
    local at = Q.at[i]
    if not at and (Q.delays[i] or 0) > 0 then
      now = now or nowMsUp()
      at = now + Q.delays[i]
    end
    if at then
      nd = nd + 2
      delayed[nd - 1], delayed[nd] = string.format('%d', at), id
      if not soonest or at < soonest then soonest = at end
      if Q.cgs[i] then
        no = no + 2
        of[no - 1], of[no] = id, Q.cgs[i]
      end
    elseif Q.cgs[i] then
      ng = ng + 1
      grouped[ng], gcgs[ng] = id, Q.cgs[i]
    else
      nr = nr + 1
      ready[nr] = id
    end
  end
  if nd > 0 then head = redis.call('ZRANGE', Q.delayed, 0, 0, 'WITHSCORES') end
  for s = 1, 2 * k, 1000 do
    redis.call('HSET', Q.payloads, unpack(pairs_, s, math.min(s + 999, 2 * k)))
  end
  for s = 1, nr, 1000 do
    redis.call('RPUSH', Q.ready, unpack(ready, s, math.min(s + 999, nr)))
  end
  if ng > 0 then groupsPush(Q.G, grouped, gcgs) end
  for s = 1, nd, 1000 do
    redis.call('ZADD', Q.delayed, unpack(delayed, s, math.min(s + 999, nd)))
  end
  for s = 1, no, 1000 do
    redis.call('HSET', KEYS[Q.G.of], unpack(of, s, math.min(s + 999, no)))
  end
  local ring = nr > 0 or ng > 0 or (nd > 0 and (head[2] == nil or soonest < tonumber(head[2])))
  if ring and Q.rung == 0 then
    redis.call('RPUSH', Q.notify, '1')
    Q.rung = 1
  end
  return k
end
