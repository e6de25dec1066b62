-- debounce: add a job to a queue's delayed set as the latest of a burst
-- of dispatches under one debounce key, trailing edge: the job runs once
-- the window has passed since the burst's last dispatch (or its max wait
-- since its first), with the latest dispatch's payload.
--
-- KEYS[1] -> delayed zset
-- KEYS[2] -> payloads hash
-- KEYS[3] -> notify list (doorbell)
-- KEYS[4] -> debounce record hash of the key: id (the job waiting for
--            the burst to end), first (Redis ms of the burst's first
--            dispatch)
-- ARGV[1] -> window in ms (at least 1)
-- ARGV[2] -> max wait in ms, counted from the burst's first dispatch (at
--            least the window)
-- ARGV[3] -> job ID for a new burst (from the caller)
-- ARGV[4] -> encoded envelope
--
-- Returns: {job ID, 1 if this dispatch started a new burst or 0 if it
-- replaced the waiting job's payload, due time in ms}.
--
-- While the record names a job still in the delayed set, a dispatch
-- replaces that job's payload (HSET) and moves its due time to now +
-- window, but never past first + max wait: each dispatch extends the
-- window, up to the max wait. The job keeps its ID (and so its dispatch
-- time), which this dispatch returns. Otherwise (no record, or one whose
-- job has left the delayed set: it fell due, ran, or was removed) the
-- dispatch starts a new burst: ARGV[3] is added with ARGV[4], due after
-- the window, and the record names it.
--
-- The record expires at its job's due time (PEXPIREAT, on the Redis
-- clock that migrate compares due times with), which is when the job
-- leaves the window: so it is gone by the time the job runs, and no call
-- on the worker's side cleans it. A record whose job was removed early
-- is found stale by the next dispatch and replaced; it expires at its
-- due time at the latest.
--
-- Errors: "WRONGTYPE <key> ..." if a key it writes holds another type;
-- "DUPLICATE <id>" if ARGV[3] exists already with another payload; ERR
-- for a bad window or max wait. Nothing is written then: every check
-- comes before the first write.
--
-- A call sent again by the Redis client after its reply was lost finds
-- the record naming the job it added or changed, and writes the same
-- payload again.

-- uses: wrong_type, now_ms

local window = tonumber(ARGV[1])
local maxWait = tonumber(ARGV[2])
if not window or window < 1 or not maxWait or maxWait < window then
  return redis.error_reply('ERR debounce: want a window of at least 1 ms and a max wait of at least the window, got ' .. tostring(ARGV[1]) .. ' and ' .. tostring(ARGV[2]))
end
local rung = redis.pcall('LLEN', KEYS[3])
if type(rung) == 'table' then return typeError(KEYS[3], 'list') or rung end
local bad = wrongType({1, 'zset', 2, 'hash', 4, 'hash'})
if bad then return bad end

local now = nowMsUp()
local rec = redis.call('HMGET', KEYS[4], 'id', 'first')
local id, first = rec[1], tonumber(rec[2])
local fresh = not (id and first and redis.call('ZSCORE', KEYS[1], id))
if fresh then
  id, first = ARGV[3], now
  local have = redis.call('HGET', KEYS[2], id)
  if have and have ~= ARGV[4] then
    return redis.error_reply('DUPLICATE ' .. id)
  end
end

local due = math.max(math.min(now + window, first + maxWait), now)
local dues = string.format('%d', due)
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')

redis.call('HSET', KEYS[2], id, ARGV[4])
redis.call('ZADD', KEYS[1], dues, id)
redis.call('HSET', KEYS[4], 'id', id, 'first', string.format('%d', first))
redis.call('PEXPIREAT', KEYS[4], dues)

-- The doorbell rings when the job falls due before every job delayed
-- before this call, so a waiting worker shortens its wait.
if (head[2] == nil or due < tonumber(head[2])) and rung == 0 then
  redis.call('RPUSH', KEYS[3], '1')
end
local isNew = 0
if fresh then isNew = 1 end
return {id, isNew, due}
