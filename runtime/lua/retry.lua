-- retry: push failed jobs back onto their queue with attempts reset.
--
-- KEYS[1] -> failed zset
-- KEYS[2] -> failed payloads hash
-- KEYS[3] -> failed info hash
-- KEYS[4] -> ready list
-- KEYS[5] -> payloads hash
-- KEYS[6] -> notify list (doorbell)
-- KEYS[7] -> failed errors hash (optional): a job retried loses its
--            attempts' errors, as its attempts start again
-- ARGV[1..] -> failed job IDs (at most 1000)
--
-- Returns: the IDs pushed back. An ID that is not in the failed store, or
-- whose ID is live on the queue again, is skipped and left as it is.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type

local bad = wrongType({1, 'zset', 2, 'hash', 3, 'hash', 4, 'list', 5, 'hash', 6, 'list'}) or (KEYS[7] and wrongType({7, 'hash'}))
if bad then return bad end

local out = {}
for _, id in ipairs(ARGV) do
  local p = redis.call('HGET', KEYS[2], id)
  if p and redis.call('HEXISTS', KEYS[5], id) == 0 then
    redis.call('HSET', KEYS[5], id, p)
    redis.call('RPUSH', KEYS[4], id)
    redis.call('ZREM', KEYS[1], id)
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
    if KEYS[7] then redis.call('HDEL', KEYS[7], id) end
    out[#out + 1] = id
  end
end
if #out > 0 and redis.call('LLEN', KEYS[6]) == 0 then
  redis.call('RPUSH', KEYS[6], '1')
end
return out
