-- rate_limit: let a job start if fewer than a limit of starts fell in the
-- last window, by the Redis clock (a sliding log). In any window of that
-- length, at most the limit start.
--
-- KEYS[1] -> zset of starts: member a random token, score its time (ms)
-- ARGV[1] -> limit, the most starts per window
-- ARGV[2] -> window in ms
-- ARGV[3] -> token for this start (random, from the caller)
--
-- Returns: {1, 0} if the start is allowed and logged; {0, wait ms} if not,
-- wait being when the oldest logged start leaves the window.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type

local bad = wrongType({1, 'zset'})
if bad then return bad end

-- uses: now_ms
local now = nowMs()
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - window))
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], string.format('%d', now), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, math.max(tonumber(oldest[2]) + window - now, 1)}
