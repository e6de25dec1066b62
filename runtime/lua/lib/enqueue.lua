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
--   then, only for a call with jobs carrying tags: t, the number of
--             them; the bound of a tag's set; and per tagged job its
--             index (from 1), its number of tags c, and its c tags.
-- A call with tagged jobs passes after the queue's keys (and the group
-- keys) the queue's monitored set, then per tagged job in order the
-- TagJobs set of each of its tags (all in the queue's slot). A job
-- carrying a tag the monitored set holds is added to that tag's set,
-- scored by the Redis ms of the push, and the set keeps its newest
-- bound jobs. The check is one SCARD of the monitored set a call, and
-- one SISMEMBER per tag when it is not empty: a call without tags pays
-- nothing.
-- A script that takes its jobs from elsewhere (retry) gives them in
-- tables instead.
--
-- Two options of a job are not written here. The choice of partition is
-- the caller's: the keys it passes are the partition's. A unique job's
-- lock is taken before the push, by lock.lua, and given back if the push
-- fails: its key (keyspace Unique) is named by the job's unique key, not
-- its queue, so it lives in a slot of its own on a cluster and cannot be
-- written by a script of the queue's slot.
--
-- enqueueOpen(b, a) returns Q, the queue and its jobs, or nil and an
-- error reply for malformed jobs or a key of another type. It writes
-- nothing: scripts call it before their first write. It reads the
-- doorbell once, for the ring. enqueueOpen(b, nil, ids, payloads) opens
-- the queue for the jobs of tables a script fills itself (retry), ready
-- now and of no group, Q.n being their number.
-- enqueueJob(Q, i) returns job i's ID, payload, delay in ms and
-- "<limit>:<group>" (false for none). A script may set Q.ids, a table of
-- every job's ID, to give jobs other IDs, and Q.at, a table of due times
-- in Redis ms by job, in place of now + their delay (debounce); and
-- Q.stored when it wrote the payload of the one job itself (push).
-- enqueueFresh(Q) returns the indexes of the jobs to write: those whose
-- ID is new, once each (nil when that is every job); or false and the
-- ID of a job that exists already, or comes twice in the call, with
-- another payload. A job that exists with the same payload is skipped:
-- that is this very push, made again. enqueueFresh(Q, true) returns
-- instead the payloads stored under the jobs' IDs (false for none), for
-- a script with rules of its own (outbox_push).
-- enqueueWrite(Q, pick) writes the jobs whose indexes pick lists, in
-- order, or every job when pick is nil, and returns the number written.
--
-- Redis pays for every closure and table a script makes, on every call:
-- the helper makes four closures, and a push of one job, the most common
-- call, reads its arguments where they are and makes no table but Q.
--
-- Uses wrong_type and groups, which the script names before it.
--
-- Q's keys are KEYS[Q.b] (ready), KEYS[Q.b + 1] (delayed), KEYS[Q.b + 2]
-- (payloads) and KEYS[Q.b + 3] (notify); Q.G, for a call that holds
-- grouped jobs, is the group keys' indexes as lib/groups.lua takes them.

local function enqueueOpen(b, a, ids, payloads)
  local Q = {b = b, a = 0, w = 2, delay = 0, n = 0, rung = 0}
  local later, last, tags = false, #KEYS, nil
  if a then
    -- tonumber costs more than the rest of a push's checks: the common
    -- values are told by their text.
    local n = ARGV[a] == '1' and 1 or tonumber(ARGV[a])
    local w = ARGV[a + 1] == '2' and 2 or tonumber(ARGV[a + 1])
    local delay = ARGV[a + 2] == '0' and 0 or tonumber(ARGV[a + 2])
    if not n or n < 0 or n > 500 or not (w == 2 or w == 3 or w == 4) or not delay or delay < 0
      or ARGV[a + 2 + n * w] == nil then
      return nil, redis.error_reply('ERR enqueue: want a count of up to 500 jobs, a width of 2, 3 or 4, a delay of 0 or more ms and the jobs, from ARGV[' .. a .. ']; nothing was written')
    end
    Q.a, Q.w, Q.delay, Q.n = a + 3, w, delay, n
    later = delay > 0
    -- The tags, after the jobs; their keys are the last of KEYS.
    local ta = a + 3 + n * w
    if ARGV[ta] ~= nil then
      local t, bound = tonumber(ARGV[ta]), tonumber(ARGV[ta + 1])
      if not t or t < 1 or not bound or bound < 1 then
        return nil, redis.error_reply('ERR enqueue: want a count of tagged jobs and a bound of 1 or more from ARGV[' .. ta .. ']; nothing was written')
      end
      tags = {bound = bound}
      local p, nk = ta + 2, 0
      for _ = 1, t do
        local i, c = tonumber(ARGV[p]), tonumber(ARGV[p + 1])
        if not i or i < 1 or i > n or not c or c < 1 or ARGV[p + 1 + c] == nil then
          return nil, redis.error_reply('ERR enqueue: tags at ARGV[' .. p .. '] are not a job index, a count and the tags; nothing was written')
        end
        for y = 1, c do
          nk = nk + 1
          tags[nk] = {i, p + 1 + y}
        end
        p = p + 2 + c
      end
      if ARGV[p] ~= nil or #KEYS < b + 4 + nk then
        return nil, redis.error_reply('ERR enqueue: the tags do not end the arguments, or the call lacks their ' .. (nk + 1) .. ' keys; nothing was written')
      end
      last = #KEYS - nk - 1
    end
  end
  if last >= b + 10 then
    Q.G = {reserved = b + 4, of = b + 5, wait = b + 6, ring = b + 7, active = b + 8, seq = b + 9, running = b + 10, ready = b}
  end
  if a then
    local n, w, delay = Q.n, Q.w, Q.delay
    -- Delays and groups are checked job by job for widths 3 and 4.
    for i = 1, (w > 2 and n or 0) do
      local j = Q.a + (i - 1) * w
      local d, cg = delay, ARGV[j + 2]
      if w == 4 then d, cg = (cg == '0' and 0 or tonumber(cg)), ARGV[j + 3] end
      if not d or d < 0 then
        return nil, redis.error_reply('ERR enqueue: job ' .. ARGV[j] .. ' has the delay "' .. tostring(ARGV[j + 2]) .. '", not 0 or more ms; nothing was written')
      end
      if d > 0 then later = true end
      if cg ~= '' then
        local l, g = string.match(cg, '^(%d+):(.*)$')
        if not l or #l > 9 or string.find(g, '\0', 1, true) then
          return nil, redis.error_reply('ERR enqueue: group of job ' .. ARGV[j] .. ' is "' .. cg .. '", not "<limit>:<group>" with no NUL in the group; nothing was written')
        end
        if not Q.G then
          return nil, redis.error_reply('ERR enqueue: job ' .. ARGV[j] .. ' has a group, and the call no group keys; nothing was written')
        end
      end
    end
  else
    Q.ids, Q.pays = ids, payloads
  end
  local rung = redis.pcall('LLEN', KEYS[b + 3])
  if type(rung) == 'table' then return nil, typeError(KEYS[b + 3], 'list') or rung end
  Q.rung = rung
  local bad = typeError(KEYS[b], 'list') or typeError(KEYS[b + 2], 'hash') or
    (later and typeError(KEYS[b + 1], 'zset')) or
    (Q.G and (groupsLoad().bad(Q.G) or typeError(KEYS[Q.G.reserved], 'zset')))
  if bad then return nil, bad end
  if tags then
    -- Q.mon: pairs of the job index and the key index of a monitored tag
    local m = last + 1
    local size = redis.pcall('SCARD', KEYS[m])
    if type(size) == 'table' then return nil, typeError(KEYS[m], 'set') or size end
    for k = 1, (size > 0 and #tags or 0) do
      if redis.call('SISMEMBER', KEYS[m], ARGV[tags[k][2]]) == 1 then
        bad = typeError(KEYS[m + k], 'zset')
        if bad then return nil, bad end
        Q.mon = Q.mon or {bound = tags.bound}
        Q.mon[#Q.mon + 1] = {tags[k][1], m + k}
      end
    end
  end
  return Q
end

local function enqueueJob(Q, i)
  local w = Q.w
  local j = Q.a + (i - 1) * w
  local id = Q.ids and Q.ids[i] or ARGV[j]
  local payload = Q.pays and Q.pays[i] or ARGV[j + 1]
  if w == 2 then return id, payload, Q.delay, false end
  local d, cg = Q.delay, ARGV[j + 2]
  if w == 4 then d, cg = (cg == '0' and 0 or tonumber(cg)), ARGV[j + 3] end
  if cg == '' then cg = false end
  return id, payload, d, cg
end

local function enqueueFresh(Q, foundOnly)
  local a, w, qids, qpays = Q.a, Q.w, Q.ids, Q.pays
  local found, nf = nil, 0
  for s = 1, Q.n, 1000 do
    local ids = {}
    for i = s, math.min(s + 999, Q.n) do ids[i - s + 1] = qids and qids[i] or ARGV[a + (i - 1) * w] end
    local part = redis.call('HMGET', KEYS[Q.b + 2], unpack(ids))
    if Q.n <= 1000 then
      found = part
    else
      found = found or {}
      for i = 1, #part do
        nf = nf + 1
        found[nf] = part[i]
      end
    end
  end
  found = found or {}
  if foundOnly then return found end
  -- pick is made at the first job skipped: a push of new jobs, the
  -- common one, writes them all.
  local pick, k, seen = nil, 0, {}
  for i = 1, Q.n do
    local j = a + (i - 1) * w
    local id = qids and qids[i] or ARGV[j]
    local payload = qpays and qpays[i] or ARGV[j + 1]
    local have = found[i] or seen[id]
    if not have then
      seen[id] = payload
      k = k + 1
      if pick then pick[k] = i end
    elseif have ~= payload then
      return false, id
    elseif not pick then
      pick = {}
      for x = 1, k do pick[x] = x end
    end
  end
  return pick
end

local function enqueueWrite(Q, pick)
  local k = pick and #pick or Q.n
  if k == 0 then return 0 end
  local b = Q.b
  if Q.mon then
    -- The jobs written that carry a monitored tag join its set.
    local t = redis.call('TIME')
    local at = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
    local picked = nil
    if pick then
      picked = {}
      for x = 1, k do picked[pick[x]] = true end
    end
    local seen, sets = {}, {}
    for _, e in ipairs(Q.mon) do
      local i = e[1]
      if not picked or picked[i] then
        redis.call('ZADD', KEYS[e[2]], at, Q.ids and Q.ids[i] or ARGV[Q.a + (i - 1) * Q.w])
        if not seen[KEYS[e[2]]] then
          seen[KEYS[e[2]]] = true
          sets[#sets + 1] = e[2]
        end
      end
    end
    for _, x in ipairs(sets) do
      redis.call('ZREMRANGEBYRANK', KEYS[x], 0, -Q.mon.bound - 1)
    end
  end
  -- The clock is read once, for a delay, and rounded up, so that a job
  -- never falls due early: migrate moves it once the clock, rounded
  -- down, has reached its due time.
  local now = nil
  if k == 1 then
    -- One job: no tables.
    local i = pick and pick[1] or 1
    local id, payload, d, cg = enqueueJob(Q, i)
    local due = Q.at and Q.at[i]
    if not due and d > 0 then
      if not now then
        local t = redis.call('TIME')
        now = tonumber(t[1]) * 1000 + math.ceil(tonumber(t[2]) / 1000)
      end
      due = now + d
    end
    if not Q.stored then redis.call('HSET', KEYS[b + 2], id, payload) end
    if due then
      local head = redis.call('ZRANGE', KEYS[b + 1], 0, 0, 'WITHSCORES')
      redis.call('ZADD', KEYS[b + 1], string.format('%d', due), id)
      if cg then redis.call('HSET', KEYS[Q.G.of], id, cg) end
      if head[2] ~= nil and due >= tonumber(head[2]) then return 1 end
    elseif cg then
      groupsLoad().push(Q.G, {id}, {cg})
    else
      redis.call('RPUSH', KEYS[b], id)
    end
    if Q.rung == 0 then redis.call('RPUSH', KEYS[b + 3], '1') end
    Q.rung = 1
    return 1
  end
  local pairs_, ready, nr, grouped, gcgs, ng, delayed, nd, of, no = {}, {}, 0, {}, {}, 0, {}, 0, {}, 0
  if Q.w == 2 and Q.delay == 0 and not Q.at and not pick and not Q.ids and not Q.pays then
    -- Jobs ready now, of no group, every one new: the common bulk push.
    -- Their pairs lie in ARGV as HSET takes them.
    local a = Q.a
    for s = 0, k - 1, 500 do
      redis.call('HSET', KEYS[b + 2], unpack(ARGV, a + 2 * s, a + 2 * math.min(s + 500, k) - 1))
    end
    for x = 1, k do ready[x] = ARGV[a + 2 * (x - 1)] end
    for s = 1, k, 1000 do
      redis.call('RPUSH', KEYS[b], unpack(ready, s, math.min(s + 999, k)))
    end
    if Q.rung == 0 then
      redis.call('RPUSH', KEYS[b + 3], '1')
      Q.rung = 1
    end
    return k
  end
  if Q.w == 2 and Q.delay == 0 and not Q.at then
    -- Jobs ready now, of no group.
    local a, ids, pays = Q.a, Q.ids, Q.pays
    for x = 1, k do
      local i = pick and pick[x] or x
      local j = a + 2 * (i - 1)
      local id = ids and ids[i] or ARGV[j]
      pairs_[2 * x - 1], pairs_[2 * x] = id, pays and pays[i] or ARGV[j + 1]
      ready[x] = id
    end
    nr = k
  end
  local soonest = nil
  for x = 1, (nr == 0 and k or 0) do
    local i = pick and pick[x] or x
    local id, payload, d, cg = enqueueJob(Q, i)
    local due = Q.at and Q.at[i]
    if not due and d > 0 then
      if not now then
        local t = redis.call('TIME')
        now = tonumber(t[1]) * 1000 + math.ceil(tonumber(t[2]) / 1000)
      end
      due = now + d
    end
    pairs_[2 * x - 1], pairs_[2 * x] = id, payload
    if due then
      nd = nd + 2
      delayed[nd - 1], delayed[nd] = string.format('%d', due), id
      if not soonest or due < soonest then soonest = due end
      if cg then
        no = no + 2
        of[no - 1], of[no] = id, cg
      end
    elseif cg then
      ng = ng + 1
      grouped[ng], gcgs[ng] = id, cg
    else
      nr = nr + 1
      ready[nr] = id
    end
  end
  local head = nd > 0 and redis.call('ZRANGE', KEYS[b + 1], 0, 0, 'WITHSCORES')
  for s = 1, 2 * k, 1000 do
    redis.call('HSET', KEYS[b + 2], unpack(pairs_, s, math.min(s + 999, 2 * k)))
  end
  for s = 1, nr, 1000 do
    redis.call('RPUSH', KEYS[b], unpack(ready, s, math.min(s + 999, nr)))
  end
  if ng > 0 then groupsLoad().push(Q.G, grouped, gcgs) end
  for s = 1, nd, 1000 do
    redis.call('ZADD', KEYS[b + 1], unpack(delayed, s, math.min(s + 999, nd)))
  end
  for s = 1, no, 1000 do
    redis.call('HSET', KEYS[Q.G.of], unpack(of, s, math.min(s + 999, no)))
  end
  if (nr > 0 or ng > 0 or (nd > 0 and (head[2] == nil or soonest < tonumber(head[2])))) and Q.rung == 0 then
    redis.call('RPUSH', KEYS[b + 3], '1')
    Q.rung = 1
  end
  return k
end
