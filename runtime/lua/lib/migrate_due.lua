-- lib migrate_due: migrateDue(k, limit, now) moves the delayed jobs due
-- by now and the reservations expired by now back to the ready list, at
-- most limit of each. k holds the indexes into KEYS of the ready list,
-- delayed zset, reserved zset, state hash (job ID ->
-- "attempts:exceptions:token") and notify list, in that order. It returns
-- the numbers of delayed and expired jobs moved, and the scores of the
-- delayed and reserved sets' heads after (-1 if empty); or an error
-- reply, and nothing else, if a key holds another type, having written
-- nothing. An expired job's token is cleared, so the worker that held it
-- can no longer ack, release, extend or fail it; its counts are kept. A
-- job whose state entry is malformed moves with its entry as it is. The
-- doorbell rings if jobs moved and no ring waits.
-- Uses wrong_type.
local function migrateDue(k, limit, now)
  local ready, delayed, reserved, state, notify = KEYS[k[1]], KEYS[k[2]], KEYS[k[3]], KEYS[k[4]], KEYS[k[5]]
  local function head(key)
    local h = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if h[2] == nil then return -1 end
    return tonumber(h[2])
  end
  local bad = wrongType({k[2], 'zset', k[3], 'zset'})
  if bad then return bad end
  -- Most calls find nothing due, and end with the two reads of the heads.
  local due_head, expiry_head = head(delayed), head(reserved)
  local function due(first) return first ~= -1 and first <= now end
  if not due(due_head) and not due(expiry_head) then
    return 0, 0, due_head, expiry_head
  end
  bad = wrongType({k[1], 'list', k[4], 'hash', k[5], 'list'})
  if bad then return bad end

  -- Moves the members of from due by now, up to limit, and returns how
  -- many moved and the score of from's head after (-1 if empty). first
  -- is the score of its head before.
  local function move(from, first, drop_tokens)
    if not due(first) then return 0, first end
    local ids = redis.call('ZRANGEBYSCORE', from, '-inf', now, 'LIMIT', 0, limit)
    for s = 1, #ids, 1000 do
      local e = math.min(s + 999, #ids)
      redis.call('ZREM', from, unpack(ids, s, e))
      if drop_tokens then
        local states = redis.call('HMGET', state, unpack(ids, s, e))
        local sargs, n = {}, 0
        for i = s, e do
          local kept = states[i - s + 1] and string.match(states[i - s + 1], '^(%d+:%d+:)')
          if kept then
            sargs[n + 1], sargs[n + 2] = ids[i], kept
            n = n + 2
          end
        end
        for z = 1, n, 1000 do
          redis.call('HSET', state, unpack(sargs, z, math.min(z + 999, n)))
        end
      end
      redis.call('RPUSH', ready, unpack(ids, s, e))
    end
    return #ids, head(from)
  end

  local moved, next_due = move(delayed, due_head, false)
  local expired, next_expiry = move(reserved, expiry_head, true)
  if moved + expired > 0 and redis.call('LLEN', notify) == 0 then
    redis.call('RPUSH', notify, '1')
  end
  return moved, expired, next_due, next_expiry
end
