-- lock: take a lock for an owner, for a time, unless another owner holds
-- it. Unique jobs and WithoutOverlapping use it.
--
-- KEYS[1] -> lock string (holds its owner)
-- ARGV[1] -> owner, such as a job ID
-- ARGV[2] -> lifetime in ms
--
-- Returns: {1, owner} if taken, or renewed for the same owner;
--          {0, holder} if another owner holds it, which changes nothing.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type

local bad = wrongType({1, 'string'})
if bad then return bad end

local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return {0, holder} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
return {1, ARGV[1]}
