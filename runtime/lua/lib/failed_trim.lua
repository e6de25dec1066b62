-- lib failed_trim: trimFailed(z, payloads, info, now, maxCount, maxAge,
-- errs, trimmed) keeps a queue's failed store (its zset z of IDs by
-- failure time, its payloads and info hashes, and its attempt errors
-- hash errs, which may be nil) within maxCount entries and maxAge ms of
-- age at now (0: no limit), dropping the oldest, at most 1000 of each
-- kind per call. What it drops it counts in the hash trimmed: count, the
-- entries trimmed in all; at, the Redis ms of the last trim; last, how
-- many that trim dropped. Returns how many it dropped.
--
-- The caller checks that trimmed is a hash (or absent) before its first
-- write; nothing in it can fail after that.
local function trimFailed(z, payloads, info, now, maxCount, maxAge, errs, trimmed)
  local n = 0
  local function drop(old)
    if #old == 0 then return end
    redis.call('ZREM', z, unpack(old))
    redis.call('HDEL', payloads, unpack(old))
    redis.call('HDEL', info, unpack(old))
    if errs then redis.call('HDEL', errs, unpack(old)) end
    n = n + #old
  end
  if maxAge > 0 then
    drop(redis.call('ZRANGEBYSCORE', z, '-inf', '(' .. string.format('%d', now - maxAge), 'LIMIT', 0, 1000))
  end
  if maxCount > 0 then
    local over = redis.call('ZCARD', z) - maxCount
    if over > 0 then
      drop(redis.call('ZRANGE', z, 0, math.min(over, 1000) - 1))
    end
  end
  if n > 0 then
    -- Not HINCRBY, which fails on a field that holds no integer after
    -- the writes above: such a count starts again from 0.
    local count = tonumber(redis.call('HGET', trimmed, 'count') or '0') or 0
    redis.call('HSET', trimmed, 'count', string.format('%d', count + n), 'at', string.format('%d', now), 'last', n)
  end
  return n
end
