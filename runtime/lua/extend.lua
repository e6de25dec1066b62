#!lua flags=allow-oom
-- extend: renew the leases of reserved jobs (the heartbeat).
--
-- KEYS[1] -> reserved zset
-- KEYS[2] -> state hash (job ID -> "attempts:exceptions:token")
-- KEYS[3] -> failed zset (optional: read only for a pair whose state is
--            gone, to tell a cancelled job from a lost one)
-- ARGV[1] -> lease in ms, counted from now
-- ARGV[2..] -> pairs: job ID, reservation token (at most 500 pairs)
--
-- Returns: {new deadline ms, then per pair 1 if renewed, 0 if the token
--           is stale, or 2 if the job was cancelled (cancel.lua: its
--           state is gone and the failed store holds it)}. A stale or
--           cancelled pair changes nothing. Renewed pairs cost nothing
--           more for the check: the failed set is read only for pairs
--           whose state is gone.
--
-- allow-oom: it only moves the scores of members that exist (ZADD XX),
-- so it takes no new memory, and past maxmemory the heartbeat must go on,
-- or every running job longer than its lease would be run again. Without
-- the flag Redis refuses it there: ZADD is a deny-oom command.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type

local bad = wrongType({1, 'zset', 2, 'hash'})
if bad then return bad end

-- uses: now_ms
local deadline = nowMs() + tonumber(ARGV[1])
local dl = string.format('%d', deadline)

local ids = {}
for i = 2, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
local states = redis.call('HMGET', KEYS[2], unpack(ids))

local out = {deadline}
local zargs = {}
for j = 1, #ids do
  local st = states[j]
  if st and string.match(st, '^%d+:%d+:(.+)$') == ARGV[2 * j + 1] then
    zargs[#zargs + 1] = dl
    zargs[#zargs + 1] = ids[j]
    out[#out + 1] = 1
  elseif not st and KEYS[3] then
    -- Checked here, before the one write (the ZADD below).
    bad = wrongType({3, 'zset'})
    if bad then return bad end
    out[#out + 1] = redis.call('ZSCORE', KEYS[3], ids[j]) and 2 or 0
  else
    out[#out + 1] = 0
  end
end
if #zargs > 0 then redis.call('ZADD', KEYS[1], 'XX', unpack(zargs)) end
return out
