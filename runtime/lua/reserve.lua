-- reserve: move due jobs to ready, then take up to N ready jobs, each
-- under a lease and a token.
--
-- KEYS[1] -> ready list
-- KEYS[2] -> reserved zset
-- KEYS[3] -> payloads hash
-- KEYS[4] -> state hash (job ID -> "attempts:exceptions:token")
-- KEYS[5] -> notify list (doorbell)
-- KEYS[6] -> paused flag
-- KEYS[7] -> calls hash of the span of time the call was made in (nonce or
--            token -> what the call did)
-- KEYS[8] -> delayed zset
-- KEYS[9] -> settings hash (the queue's flow limits; lib/flow_limit.lua)
-- KEYS[10..15] -> the group keys (optional; lib/groups.lua): of, wait,
--            ring, active, seq, running. While the queue holds grouped
--            jobs, jobs are taken one per group in turn, after the jobs
--            back in ready are sorted into their groups.
-- ARGV[1] -> N, the most jobs to take
-- ARGV[2] -> lease in ms
-- ARGV[3] -> reservation token (random, from the caller)
-- ARGV[4] -> how long to keep the calls hash after its first write, in ms
--            (0: record nothing)
-- ARGV[5] -> migrate limit: at most this many delayed and this many
--            expired jobs move to ready first
-- ARGV[6] -> "1" to hold the jobs taken (optional): their attempt is not
--            counted yet, and they are reserved under the token "h" ..
--            ARGV[3] until start.lua starts them, each as its handler
--            starts. A held job whose lease runs out, or that is given
--            back (unreserve.lua), keeps its count: it never started.
--            The attempts returned are those the jobs will have started.
--
-- Returns: {now ms, lease deadline ms, delayed jobs moved, expired jobs
--           moved, next due ms or -1, next lease deadline ms or -1, µs
--           past now ms, then per job: id, attempts, exceptions,
--           payload}. The moves are migrate's (lib/migrate_due.lua), made
--           first, so that one call both moves what fell due and takes
--           it. Nothing is taken while the queue is paused; due jobs
--           still move.
--           A job whose state entry was malformed (not
--           "attempts:exceptions:token" with counts of up to 15 digits)
--           comes with attempts 0 and, for exceptions, the entry as it
--           was (a string; 0 when handed back by a retried call): it is
--           reserved like the others, under the state "0:0:<token>"
--           (the plain token, even when held), for
--           its worker to fail. Every other job of the call is taken as
--           usual.
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type
-- (the paused flag may be of any). Redis keeps what a script wrote
-- before a command of it failed, so the keys are checked before the
-- first write: it writes nothing then.
--
-- A queue's concurrency limit and rate cap how many jobs a call takes,
-- and while its hold lasts (queue_hold.lua) a call takes none
-- (lib/flow_limit.lua); a queue without them pays one HMGET.
--
-- IDs in the ready list with no payload (removed jobs) are dropped. The
-- doorbell rings again if jobs remain, so the next waiting worker wakes.
--
-- A call is made again with the same token when the Redis client retries
-- it after losing its reply; the jobs the first run took reached no
-- worker. So a run that takes jobs records its deadline under its token,
-- and a run that finds the record takes nothing new: it returns, with
-- that deadline, the jobs the first run took that are still held under
-- the token (all of them, unless the lease has run out, then none), in
-- reserved-set order rather than queue order. The record costs one HGET
-- per call, and one HSET and one PEXPIRE per call that takes jobs.
--
-- Not allow-oom: the reserved set and the state hash grow by every job
-- taken, and the calls hash by the call. It has no shebang, so Redis
-- judges it command by command: past maxmemory it refuses a deny-oom
-- command only as a script's first write, and this script's first write
-- is a move's ZREM or the LPOP, neither of which is one; so workers
-- drain a full Redis.

-- uses: wrong_type, now_ms, migrate_due, flow_limit
local now, us = nowMs()
local hold = ARGV[6] == '1'
-- The token the jobs are stored under: a held job's starts with "h",
-- which no token (hex digits) does.
local token = ARGV[3]
if hold then token = 'h' .. token end
local keep = tonumber(ARGV[4])
local bad = wrongType({1, 'list', 2, 'zset', 3, 'hash', 4, 'hash', 5, 'list', 8, 'zset'}) or (keep > 0 and wrongType({7, 'hash'}))
if bad then return bad end
local flow
flow, bad = flowRead(9)
if bad then return bad end
local limited = (flow and flow.limit > 0) and 1 or 0
-- uses: groups
local G = {of = 10, wait = 11, ring = 12, active = 13, seq = 14, running = 15, ready = 1, reserved = 2}
-- One EXISTS is all a queue without groups pays.
local grouped = KEYS[15] and redis.call('EXISTS', KEYS[10], KEYS[11]) > 0
bad = grouped and groupsLoad().bad(G)
if bad then return bad end

-- Every key is checked: the moves cannot fail.
local moved, expired, next_due, next_expiry = migrateDue({1, 8, 2, 4, 5}, tonumber(ARGV[5]), now)
if expired == nil then return moved end

local prev = keep > 0 and redis.call('HGET', KEYS[7], ARGV[3])
if prev then
  local out = {now, tonumber(prev), moved, expired, next_due, next_expiry, us, limited, -1}
  -- Jobs whose lease has run out are not handed back: migrate may move
  -- them to ready at any moment.
  if tonumber(prev) <= now then return out end
  local ids = redis.call('ZRANGEBYSCORE', KEYS[2], prev, prev)
  for s = 1, #ids, 1000 do
    local e = math.min(s + 999, #ids)
    local states = redis.call('HMGET', KEYS[4], unpack(ids, s, e))
    local payloads = redis.call('HMGET', KEYS[3], unpack(ids, s, e))
    for i = s, e do
      local st = states[i - s + 1]
      local p = payloads[i - s + 1]
      if st and p then
        local a, x, tok = string.match(st, '^(%d+):(%d+):(.*)$')
        -- A held call's malformed entries are marked under the plain
        -- token (below).
        if tok == token or (hold and tok == ARGV[3]) then
          out[#out + 1] = ids[i]
          out[#out + 1] = tonumber(a) + ((tok == token and hold) and 1 or 0)
          out[#out + 1] = tonumber(x)
          out[#out + 1] = p
        end
      end
    end
  end
  return out
end

local deadline = now + tonumber(ARGV[2])
local out = {now, deadline, moved, expired, next_due, next_expiry, us, limited, -1}

if redis.call('EXISTS', KEYS[6]) == 1 then return out end

local want, by = flowRoom(flow, KEYS[2], tonumber(ARGV[1]), now)
-- The ready list, or while the queue holds grouped jobs, the ring.
local waiting = grouped and KEYS[12] or KEYS[1]
local popped
if want > 0 then
  if grouped then
    popped = groupsLoad().take(G, want)
  else
    popped = redis.call('LPOP', KEYS[1], want)
  end
end
if not popped then
  out[9] = flowTaken(flow, 0, by, waiting)
  return out
end

local dl = string.format('%d', deadline)
-- The state of a job taken for the first time, the most common case.
local first = (hold and '0:0:' or '1:0:') .. token
-- The state of a job whose entry was malformed, until its worker fails it:
-- under the plain token, held or not, so that its attempts of 0 tell it
-- from a held job's first.
local marked = '0:0:' .. ARGV[3]
local seen = {}
local taken = 0
local o = #out
for s = 1, #popped, 1000 do
  local e = math.min(s + 999, #popped)
  local payloads = redis.call('HMGET', KEYS[3], unpack(popped, s, e))
  local states = redis.call('HMGET', KEYS[4], unpack(popped, s, e))
  -- One call per key for the whole chunk, not one per job. Tables are
  -- filled through counters: #t costs a search per append.
  local zargs, sargs, n = {}, {}, 0
  for i = s, e do
    local id = popped[i]
    local p = payloads[i - s + 1]
    if p and not seen[id] then
      seen[id] = true
      local a, x, st = 1, 0, states[i - s + 1]
      if st then
        local sa, sx = string.match(st, '^(%d+):(%d+):')
        if sa and #sa <= 15 and #sx <= 15 then
          a, x = tonumber(sa) + 1, tonumber(sx)
          if hold then
            st = sa .. ':' .. x .. ':' .. token
          else
            st = a .. ':' .. x .. ':' .. token
          end
        else
          a, x, st = 0, st, marked
        end
      else
        st = first
      end
      zargs[n + 1], zargs[n + 2] = dl, id
      sargs[n + 1], sargs[n + 2] = id, st
      n = n + 2
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = id, a, x, p
      o = o + 4
    end
  end
  -- 2 values per job and at most 1000 jobs per chunk: 2000 values.
  for z = 1, n, 1000 do
    local ze = math.min(z + 999, n)
    redis.call('ZADD', KEYS[2], unpack(zargs, z, ze))
    redis.call('HSET', KEYS[4], unpack(sargs, z, ze))
  end
  taken = taken + n
end

out[9] = flowTaken(flow, taken / 2, by, waiting)
if taken > 0 and keep > 0 then
  redis.call('HSET', KEYS[7], ARGV[3], dl)
  redis.call('PEXPIRE', KEYS[7], keep, 'NX')
end
-- Fewer popped than asked for means the list is empty now; a limit
-- that cut the call short leaves no room for another.
if #popped == want and not by and redis.call('LLEN', waiting) > 0
    and redis.call('LLEN', KEYS[5]) == 0 then
  redis.call('RPUSH', KEYS[5], '1')
end
return out
