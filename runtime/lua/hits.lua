-- hits: count a hit on a counter whose lifetime starts at its first hit.
-- ThrottlesExceptions counts exceptions with it.
--
-- KEYS[1] -> counter string
-- ARGV[1] -> lifetime in ms, from the first hit
--
-- Returns: the count, this hit included.

local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
end
return n
