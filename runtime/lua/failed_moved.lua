-- failed_moved: delete entries of the failed store that another store
-- (EngineConfig.FailedStore, such as a PostgreSQL table) has taken, each
-- only if it is still the failure that store took: one whose failed-at
-- time is the one given. A job retried and failed again meanwhile has
-- another time, and stays for the next move.
--
-- KEYS[1] -> failed zset
-- KEYS[2] -> failed payloads hash
-- KEYS[3] -> failed info hash
-- KEYS[4] -> failed errors hash
-- ARGV[1..] -> pairs: failed job ID, its failed-at time (Redis ms) as
--              the other store took it (at most 1000 pairs)
--
-- Returns: the number of entries deleted.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type

local bad = wrongType({1, 'zset', 2, 'hash', 3, 'hash', 4, 'hash'})
if bad then return bad end

local gone = {}
for i = 1, #ARGV, 2 do
  local at = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if at and tonumber(at) == tonumber(ARGV[i + 1]) then
    gone[#gone + 1] = ARGV[i]
  end
end
if #gone == 0 then return 0 end
redis.call('ZREM', KEYS[1], unpack(gone))
redis.call('HDEL', KEYS[2], unpack(gone))
redis.call('HDEL', KEYS[3], unpack(gone))
redis.call('HDEL', KEYS[4], unpack(gone))
return #gone
