-- unlock: release a lock taken with lock, if the owner still holds it.
--
-- KEYS[1] -> lock string (holds its owner)
-- ARGV[1] -> owner
--
-- Returns: 1 if released; 0 if the lock is gone (expired) or held by
-- another owner, which changes nothing.

if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
