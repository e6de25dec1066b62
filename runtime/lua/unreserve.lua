#!lua flags=allow-oom
-- unreserve: give back reserved jobs that never started, as if they had
-- not been reserved: each goes back to the front of the ready list, in
-- the order given, and its attempt count drops by the one reserve added;
-- a held job's (token "h...", reserve.lua), which reserve did not count,
-- stays as it is.
--
-- KEYS[1] -> ready list
-- KEYS[2] -> reserved zset
-- KEYS[3] -> state hash (job ID -> "attempts:exceptions:token")
-- KEYS[4] -> notify list (doorbell)
-- KEYS[5..10] -> the group keys (optional; lib/groups.lua): of, wait,
--            ring, active, seq, running; given for a queue that holds
--            grouped jobs. A job given back frees its group's slot; it
--            goes back into its group when reserve finds it in ready.
-- ARGV[1..] -> pairs: job ID, reservation token (at most 1000 pairs)
--
-- Returns: per pair, 1 if given back or 0 if the token is stale. A stale
-- pair changes nothing. The doorbell rings when a job was given back.
--
-- allow-oom: it takes no new memory. Each job moves from the reserved set
-- back to the ready list, and its state entry is rewritten in place; a
-- worker must be able to give its jobs back when Redis is full.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type

local bad = wrongType({1, 'list', 2, 'zset', 3, 'hash', 4, 'list'})
if bad then return bad end
-- uses: groups
local G = KEYS[10] and {of = 5, wait = 6, ring = 7, active = 8, seq = 9, running = 10, ready = 1, reserved = 2}
bad = G and groupsLoad().bad(G)
if bad then return bad end

local ids = {}
for i = 1, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
local states = redis.call('HMGET', KEYS[3], unpack(ids))

local out, done, sargs = {}, {}, {}
for j = 1, #ids do
  local st = states[j]
  local a, x, tok
  if st then a, x, tok = string.match(st, '^(%d+):(%d+):(.+)$') end
  if tok and tok == ARGV[2 * j] then
    done[#done + 1] = ids[j]
    sargs[#sargs + 1] = ids[j]
    local back = tonumber(a)
    if string.sub(tok, 1, 1) ~= 'h' then back = math.max(back - 1, 0) end
    sargs[#sargs + 1] = back .. ':' .. x .. ':'
    out[j] = 1
  else
    out[j] = 0
  end
end
if #done > 0 then
  redis.call('ZREM', KEYS[2], unpack(done))
  redis.call('HSET', KEYS[3], unpack(sargs))
  -- LPUSH puts its last argument first: push in reverse to keep the order.
  local rev = {}
  for j = #done, 1, -1 do rev[#rev + 1] = done[j] end
  redis.call('LPUSH', KEYS[1], unpack(rev))
  if G then groupsLoad().free(G, done, false) end
  if redis.call('LLEN', KEYS[4]) == 0 then
    redis.call('RPUSH', KEYS[4], '1')
  end
end
return out
