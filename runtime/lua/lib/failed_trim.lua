-- lib failed_trim: trimFailed(z, payloads, info, now, maxCount, maxAge,
-- errs) keeps a queue's failed store (its zset z of IDs by failure time,
-- its payloads and info hashes, and its attempt errors hash errs, which
-- may be nil) within maxCount entries and maxAge ms of
-- age at now (0: no limit), dropping the oldest, at most 1000 of each
-- kind per call.
local function trimFailed(z, payloads, info, now, maxCount, maxAge, errs)
  local function drop(old)
    if #old == 0 then return end
    redis.call('ZREM', z, unpack(old))
    redis.call('HDEL', payloads, unpack(old))
    redis.call('HDEL', info, unpack(old))
    if errs then redis.call('HDEL', errs, unpack(old)) end
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
end
