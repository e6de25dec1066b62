-- lib groups: fair groups inside one queue (docs/flow-control.md).
-- G holds the indexes into KEYS of the group keys: of (hash job ID ->
-- "<limit>:<group>"), wait (zset, scores 0, of "<group>\0<seq>" .. ID:
-- each group's waiting jobs in order), ring (list: the groups whose turn
-- it is), active (set of the groups in ring), seq (string counter),
-- running (zset, scores 0, of "<group>\0" .. ID: reserved jobs of groups
-- with a limit). A group name holds no \0, so "[<group>\0" to
-- "(<group>\1" is its range, and no other group's.
--
-- bad(G) returns an error reply if a group key holds another type.
-- push(G, ids, cgs) puts jobs (ID, "<limit>:<group>") at the back
-- of their groups and turns the groups in; take(G, n) sorts up
-- to 100 + n IDs from the ready list KEYS[k.ready] into their groups
-- (a job that comes back to ready, from a release, a lease run out, a
-- delay or a retry, goes back into its group; an ID of no group into
-- the group ""), then takes up to n, one per turn of the ring, and
-- returns their IDs. free(G, ids, drop) frees the limit slots of
-- jobs that left the reserved set, turns their groups back in, and with
-- drop forgets their groups; it returns the number of groups turned in.
--
-- A group's running count is derived: the members of running whose job
-- is still in the reserved zset KEYS[G.reserved], checked whenever the
-- count reaches the limit, so a slot whose job ended by any path (an
-- expired lease, a stale token) comes back without fail.
--
-- Scripts call them through groupsLoad(), which makes them on its first
-- call: groupsLoad().bad(G), .push(G, ids, cgs), .take(G, n), .free(G,
-- ids, drop). A call on a queue that holds no grouped job makes one
-- closure for them, not nine: Redis pays for each closure a script
-- makes, on every call.
local groupsLib = nil
local function groupsLoad()
  if groupsLib then return groupsLib end
  local function gkey(G, name) return KEYS[G[name]] end

  local function groupsBad(G)
    return wrongType({G.of, 'hash', G.wait, 'zset', G.ring, 'list', G.active, 'set', G.seq, 'string', G.running, 'zset'})
  end

  -- groupOf splits "<limit>:<group>"; an entry it cannot read is the
  -- group "" with no limit.
  local function groupOf(cg)
    if not cg then return '', 0 end
    local l, g = string.match(cg, '^(%d+):(.*)$')
    if not l or string.find(g, '\0', 1, true) then return '', 0 end
    return g, tonumber(l)
  end

  -- groupRunning returns the number of g's jobs that hold a slot, dropping
  -- those no longer reserved when the count reaches limit.
  local function groupRunning(G, g, limit)
    local running = gkey(G, 'running')
    local lo, hi = '[' .. g .. '\0', '(' .. g .. '\1'
    local n = redis.call('ZLEXCOUNT', running, lo, hi)
    if n < limit then return n end
    local ms = redis.call('ZRANGEBYLEX', running, lo, hi, 'LIMIT', 0, 1000)
    local ids = {}
    for i, m in ipairs(ms) do ids[i] = string.sub(m, #g + 2) end
    local scores = redis.call('ZMSCORE', KEYS[G.reserved], unpack(ids))
    local gone, k = {}, 0
    for i = 1, #ids do
      -- A job this very call takes is reserved only after groupsTake.
      if not scores[i] and not (G.taking and G.taking[ids[i]]) then
        k = k + 1
        gone[k] = ms[i]
      end
    end
    if k > 0 then redis.call('ZREM', running, unpack(gone)) end
    return n - k
  end

  -- groupTurnIn puts g on the ring if it has waiting jobs, is below its
  -- limit and is not on it already; it returns 1 if it did.
  local function groupTurnIn(G, g, limit)
    if redis.call('SISMEMBER', gkey(G, 'active'), g) == 1 then return 0 end
    local h = redis.call('ZRANGEBYLEX', gkey(G, 'wait'), '[' .. g .. '\0', '(' .. g .. '\1', 'LIMIT', 0, 1)
    if not h[1] then return 0 end
    if limit > 0 and groupRunning(G, g, limit) >= limit then return 0 end
    redis.call('SADD', gkey(G, 'active'), g)
    redis.call('RPUSH', gkey(G, 'ring'), g)
    return 1
  end

  -- groupsAdd puts ids (at most 1000) at the back of their groups, cgs[i]
  -- being ids[i]'s "<limit>:<group>" or false, and turns the groups in.
  local function groupsAdd(G, ids, cgs)
    local n = #ids
    if n == 0 then return end
    local base = redis.call('INCRBY', gkey(G, 'seq'), n) - n
    local zargs, order, limits, k = {}, {}, {}, 0
    for i = 1, n do
      local g, limit = groupOf(cgs[i])
      zargs[2 * i - 1] = 0
      zargs[2 * i] = g .. '\0' .. string.format('%016d', base + i) .. ids[i]
      if not limits[g] then
        k = k + 1
        order[k] = g
      end
      limits[g] = limit
    end
    for z = 1, 2 * n, 1000 do
      redis.call('ZADD', gkey(G, 'wait'), unpack(zargs, z, math.min(z + 999, 2 * n)))
    end
    for i = 1, k do groupTurnIn(G, order[i], limits[order[i]]) end
  end

  local function groupsPush(G, ids, cgs)
    for s = 1, #ids, 500 do
      local e = math.min(s + 499, #ids)
      local args = {}
      for i = s, e do
        args[2 * (i - s) + 1] = ids[i]
        args[2 * (i - s) + 2] = cgs[i]
      end
      redis.call('HSET', gkey(G, 'of'), unpack(args))
      groupsAdd(G, {unpack(ids, s, e)}, {unpack(cgs, s, e)})
    end
  end

  local function groupsTake(G, n)
    -- Jobs back in ready go back into their groups, a bounded number a
    -- call; a lease that ran out frees its slot here.
    local back = redis.call('LPOP', KEYS[G.ready], math.min(100 + n, 1000))
    if back then
      local cgs = redis.call('HMGET', gkey(G, 'of'), unpack(back))
      local free, k = {}, 0
      for i = 1, #back do
        local g, limit = groupOf(cgs[i])
        if limit > 0 then
          k = k + 1
          free[k] = g .. '\0' .. back[i]
        end
      end
      if k > 0 then redis.call('ZREM', gkey(G, 'running'), unpack(free)) end
      groupsAdd(G, back, cgs)
    end
    local out, o = {}, 0
    G.taking = {}
    while o < n do
      local g = redis.call('LPOP', gkey(G, 'ring'))
      if not g then break end
      redis.call('SREM', gkey(G, 'active'), g)
      local h = redis.call('ZRANGEBYLEX', gkey(G, 'wait'), '[' .. g .. '\0', '(' .. g .. '\1', 'LIMIT', 0, 2)
      if h[1] then
        redis.call('ZREM', gkey(G, 'wait'), h[1])
        local id = string.sub(h[1], #g + 18)
        o = o + 1
        out[o] = id
        G.taking[id] = true
        local _, limit = groupOf(redis.call('HGET', gkey(G, 'of'), id))
        if limit > 0 then redis.call('ZADD', gkey(G, 'running'), 0, g .. '\0' .. id) end
        if h[2] then groupTurnIn(G, g, limit) end
      end
    end
    return out
  end

  local function groupsFree(G, ids, drop)
    local cgs = redis.call('HMGET', gkey(G, 'of'), unpack(ids))
    local turned, gone, k = 0, {}, 0
    for i = 1, #ids do
      if cgs[i] then
        k = k + 1
        gone[k] = ids[i]
        local g, limit = groupOf(cgs[i])
        if limit > 0 then
          -- Turned in even when the slot was freed already (a lease that
          -- ran out), in case the group waits for it.
          redis.call('ZREM', gkey(G, 'running'), g .. '\0' .. ids[i])
          turned = turned + groupTurnIn(G, g, limit)
        end
      end
    end
    if drop and k > 0 then redis.call('HDEL', gkey(G, 'of'), unpack(gone)) end
    return turned
  end
  groupsLib = {bad = groupsBad, push = groupsPush, take = groupsTake, free = groupsFree}
  return groupsLib
end

