-- progress: record how far a running job has got, if the reservation
-- that reports it is still the job's current one.
--
-- KEYS[1] -> state hash (job ID -> "attempts:exceptions:token")
-- KEYS[2] -> progress hash (job ID -> "<percent> <unix ms> <attempt>
--            <note>")
-- ARGV[1] -> job ID
-- ARGV[2] -> reservation token
-- ARGV[3] -> percent, 0 to 100 (checked by the caller)
-- ARGV[4] -> note (at most 200 bytes, cut by the caller)
--
-- Returns: 1 if recorded, 0 if the token is stale (the job was settled,
-- cancelled, or is another worker's now): nothing changes then. So a
-- write that lands after the job's ack, fail or cancel, which delete its
-- entry, cannot bring it back.
--
-- Not allow-oom: the entry is new memory.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type, now_ms

local bad = wrongType({1, 'hash', 2, 'hash'})
if bad then return bad end

local st = redis.call('HGET', KEYS[1], ARGV[1])
local a, tok
if st then a, tok = string.match(st, '^(%d+):%d+:(.+)$') end
if not tok or tok ~= ARGV[2] then return 0 end
local now = nowMs()
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3] .. ' ' .. string.format('%d', now) .. ' ' .. a .. ' ' .. ARGV[4])
return 1
