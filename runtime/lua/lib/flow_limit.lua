-- lib flow_limit: a queue's concurrency limit and rate limit, enforced
-- at reserve (runtime/flow_limit.go). They live in the queue's settings
-- hash: limit, the most of its jobs under lease at once (its reserved
-- set's size, held jobs included); rate and rate_ms, the most jobs taken
-- in a window of rate_ms; win and used, the current window's start
-- (Redis ms) and the jobs taken in it; held_limit and held_rate, how many
-- reserves each held back while ready jobs waited; hold, the Redis ms
-- until which no job of the queue is taken (queue_hold.lua, a handler's
-- runtime.HoldQueue). A missing field is none (0).
--
-- flowRead(k) reads settings KEYS[k] with one HMGET, and writes nothing:
-- it returns nil for a queue with neither limit nor hold (its only cost
-- there),
-- else a table for the calls below; or nil and an error reply if the key
-- holds another type or a field holds no count.
-- flowRoom(f, reserved, asked, now) returns how many of asked jobs the
-- call may take, and the limit that cut it below asked ('limit',
-- 'rate' or 'hold'), or nil. reserved is the reserved set's key. A hold
-- that has not ended takes nothing; one that has ended is deleted.
-- flowTaken(f, taken, by, ready) records the jobs taken in the rate's
-- window and, if by held the call back while ready (the ready list's
-- key) still holds jobs, counts it in held_<by>. It returns when the
-- rate or the hold lets more through (Redis ms), or -1 if it does now.
-- A hold is not counted. Both take a nil f (no limit) and do nothing
-- then.
-- Uses wrong_type.
local function flowRead(k)
  local v = redis.pcall('HMGET', KEYS[k], 'limit', 'rate', 'rate_ms', 'win', 'used', 'hold')
  if v.err then return nil, typeError(KEYS[k], 'hash') or v end
  if not v[1] and not v[2] and not v[6] then return nil end
  local names = {'limit', 'rate', 'rate_ms', 'win', 'used', 'hold'}
  local f = {key = KEYS[k]}
  for i = 1, #names do
    local s = v[i] or '0'
    if not string.match(s, '^%d+$') or #s > 15 then
      return nil, redis.error_reply('ERR field ' .. names[i] .. ' of ' .. KEYS[k] .. ' holds "' .. s .. '", not a count; nothing was written')
    end
    f[names[i]] = tonumber(s)
  end
  if f.rate > 0 and f.rate_ms < 1 then
    return nil, redis.error_reply('ERR ' .. KEYS[k] .. ' has a rate with no rate_ms; nothing was written')
  end
  return f
end

local function flowRoom(f, reserved, asked, now)
  local room, by = asked, nil
  if not f then return room, by end
  if f.hold > 0 then
    if f.hold > now then return 0, 'hold' end
    -- An ended hold's field goes, so that a queue without limits pays
    -- only its HMGET again.
    redis.call('HDEL', f.key, 'hold')
  end
  if f.limit > 0 then
    local free = f.limit - redis.call('ZCARD', reserved)
    if free < room then room, by = math.max(free, 0), 'limit' end
  end
  if f.rate > 0 then
    -- A window starts with the first job taken after the last one ended.
    if now >= f.win + f.rate_ms then f.win, f.used = now, 0 end
    local left = f.rate - f.used
    if left < room then room, by = math.max(left, 0), 'rate' end
  end
  return room, by
end

local function flowTaken(f, taken, by, ready)
  if not f then return -1 end
  if by == 'hold' then return f.hold end
  if f.rate > 0 and taken > 0 then
    f.used = f.used + taken
    redis.call('HSET', f.key, 'win', string.format('%d', f.win), 'used', f.used)
  end
  if by and redis.call('LLEN', ready) > 0 then
    -- pcall: past maxmemory Redis refuses it as a script's first write
    -- (a call that took nothing); the count is not worth failing for.
    redis.pcall('HINCRBY', f.key, 'held_' .. by, 1)
  end
  if f.rate > 0 and f.used >= f.rate then return f.win + f.rate_ms end
  return -1
end
