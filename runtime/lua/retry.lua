-- retry: push failed jobs back onto their queue with attempts reset
-- (lib/enqueue.lua). A job of a fair group goes back into its group when
-- reserve finds it in ready, as its group entry stayed when it failed.
--
-- KEYS[1] -> failed zset
-- KEYS[2] -> failed payloads hash
-- KEYS[3] -> failed info hash
-- KEYS[4] -> failed errors hash: a job retried takes its attempts'
--            errors back to the queue's errors hash (KEYS[5]), where
--            its new attempts' errors follow them (the last 10 kept)
-- KEYS[5] -> the queue's errors hash
-- KEYS[6..] -> the queue's keys, as lib/enqueue.lua takes them
-- ARGV[1..] -> failed job IDs (at most 1000)
--
-- Returns: the IDs pushed back. An ID that is not in the failed store, or
-- whose ID is live on the queue again, is skipped and left as it is.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type, groups, enqueue

local out, payloads, n = {}, {}, 0
local bad = wrongType({1, 'zset', 2, 'hash', 3, 'hash', 4, 'hash', 5, 'hash'})
if bad then return bad end
local Q
Q, bad = enqueueOpen(6, nil, out, payloads)
if not Q then return bad end
for _, id in ipairs(ARGV) do
  local p = redis.call('HGET', KEYS[2], id)
  if p and redis.call('HEXISTS', KEYS[Q.b + 2], id) == 0 then
    n = n + 1
    out[n], payloads[n] = id, p
  end
end
Q.n = n
if n == 0 then return out end
for i = 1, n do
  local errs = redis.call('HGET', KEYS[4], out[i])
  if errs then
    redis.call('HSET', KEYS[5], out[i], errs)
  end
end
for s = 1, n, 1000 do
  local e = math.min(s + 999, n)
  redis.call('ZREM', KEYS[1], unpack(out, s, e))
  redis.call('HDEL', KEYS[2], unpack(out, s, e))
  redis.call('HDEL', KEYS[3], unpack(out, s, e))
  redis.call('HDEL', KEYS[4], unpack(out, s, e))
end
enqueueWrite(Q, nil)
return out
