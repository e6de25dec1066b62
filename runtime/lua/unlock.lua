-- unlock: release a lock taken with lock, if the owner still holds it.
--
-- KEYS[1] -> lock string (holds its owner)
-- ARGV[1] -> owner
--
-- Returns: 1 if released; 0 if the lock is gone (expired) or held by
-- another owner, which changes nothing.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type

local bad = wrongType({1, 'string'})
if bad then return bad end

if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
