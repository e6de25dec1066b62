-- hits: count a hit on a counter whose lifetime starts at its first hit.
-- ThrottlesExceptions counts exceptions with it.
--
-- KEYS[1] -> set of hits: one member per hit, its nonce
-- ARGV[1] -> lifetime in ms, from the first hit
-- ARGV[2] -> nonce of this hit (random, from the caller)
--
-- Returns: the count, this hit included.
--
-- The Redis client sends a call again when the connection broke before
-- its reply came. A hit is a member of the set rather than an increment,
-- so a hit sent again finds its nonce there and is not counted twice.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type

local bad = wrongType({1, 'set'})
if bad then return bad end

redis.call('SADD', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]), 'NX')
return redis.call('SCARD', KEYS[1])
