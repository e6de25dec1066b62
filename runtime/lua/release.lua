#!lua flags=allow-oom
-- release: put reserved jobs back, ready now or after a delay.
--
-- KEYS[1] -> ready list
-- KEYS[2] -> delayed zset
-- KEYS[3] -> reserved zset
-- KEYS[4] -> state hash (job ID -> "attempts:exceptions:token")
-- KEYS[5] -> notify list (doorbell)
-- KEYS[6] -> errors hash (optional: job ID -> its last attempts' errors,
--            lib/attempt_errors.lua); given with ARGV[3]
-- KEYS[7..12] -> the group keys (optional, with KEYS[6]; lib/groups.lua):
--            of, wait, ring, active, seq, running; given for a queue that
--            holds grouped jobs. A released job frees its group's slot; it
--            goes back into its group when reserve finds it in ready.
-- ARGV[1] -> delay in ms (0: back of the ready list now)
-- ARGV[2] -> 1 if the release follows an exception (counted), 0 if not,
--            "d" for a deferral: no exception, and the attempt the job's
--            start counted is given back (its count drops by one, as in
--            unreserve.lua), so the deferral uses no try
-- ARGV[3] -> with KEYS[6] only: the error the released attempt ended
--            with, recorded for each job released with its attempt
--            number and the time ("" records none); the pairs then start
--            at ARGV[4]
-- ARGV[3..] -> pairs: job ID, reservation token (at most 1000 pairs)
--
-- Returns: per pair, 1 if released or 0 if the token is stale. A stale
-- pair changes nothing. The attempt count is kept (but for a deferral);
-- the token is cleared.
--
-- allow-oom: it takes no new memory, but for an error recorded (at most
-- 10 per job, of at most 1,000 bytes each, by the caller): Each job moves from the reserved set
-- to the delayed set or the ready list, and its state loses its token.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type, attempt_errors

-- uses: now_ms
local now = nowMs()
local delay = tonumber(ARGV[1])
local deferral = ARGV[2] == 'd'
local exc = 0
if ARGV[2] == '1' then exc = 1 end
local bad = wrongType({3, 'zset', 4, 'hash', 5, 'list'}) or wrongType(delay > 0 and {2, 'zset'} or {1, 'list'})
  or (KEYS[6] and wrongType({6, 'hash'}))
if bad then return bad end
-- The first pair's index in ARGV, less one.
local o = 2
if KEYS[6] then o = 3 end
-- uses: groups
local G = KEYS[12] and {of = 7, wait = 8, ring = 9, active = 10, seq = 11, running = 12, ready = 1, reserved = 3}
bad = G and groupsLoad().bad(G)
if bad then return bad end

local ids = {}
for i = o + 1, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
local states = redis.call('HMGET', KEYS[4], unpack(ids))

local out, done, sargs = {}, {}, {}
for j = 1, #ids do
  local st = states[j]
  local a, x, tok
  if st then a, x, tok = string.match(st, '^(%d+):(%d+):(.+)$') end
  if tok and tok == ARGV[2 * j + o] then
    done[#done + 1] = ids[j]
    if KEYS[6] and ARGV[3] ~= '' then
      addAttemptError(KEYS[6], ids[j], string.format('%d', now) .. ' ' .. a .. ' ' .. ARGV[3], 10)
    end
    sargs[#sargs + 1] = ids[j]
    -- A deferral gives back the attempt its start counted; a held job's
    -- (token "h...", reserve.lua) was not counted, and keeps its count.
    if deferral and string.sub(tok, 1, 1) ~= 'h' then a = math.max(tonumber(a) - 1, 0) end
    sargs[#sargs + 1] = a .. ':' .. (tonumber(x) + exc) .. ':'
    out[j] = 1
  else
    out[j] = 0
  end
end
if #done == 0 then return out end

-- Pairs of values are unpacked 1000 at a time.
local function chunked(cmd, key, args)
  for z = 1, #args, 1000 do
    redis.call(cmd, key, unpack(args, z, math.min(z + 999, #args)))
  end
end

redis.call('ZREM', KEYS[3], unpack(done))
chunked('HSET', KEYS[4], sargs)
local ring = true
if G and groupsLoad().free(G, done, false) > 0 and redis.call('LLEN', KEYS[5]) == 0 then
  redis.call('RPUSH', KEYS[5], '1')
end
if delay > 0 then
  local head = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  local due = now + delay
  ring = head[2] == nil or due < tonumber(head[2])
  local dues = string.format('%d', due)
  local zargs = {}
  for _, id in ipairs(done) do
    zargs[#zargs + 1] = dues
    zargs[#zargs + 1] = id
  end
  chunked('ZADD', KEYS[2], zargs)
else
  redis.call('RPUSH', KEYS[1], unpack(done))
end
if ring and redis.call('LLEN', KEYS[5]) == 0 then
  redis.call('RPUSH', KEYS[5], '1')
end
return out
