-- batch_add: create a batch, or count jobs added to one, before they are
-- pushed. A batch's keys share the hash tag {batch:ID}, a slot apart
-- from every queue: batch scripts touch nothing else.
--
-- KEYS[1] -> batch state hash
-- KEYS[2] -> done set (IDs of jobs that succeeded)
-- KEYS[3] -> failed hash (job ID -> queue, for jobs that failed for good)
-- KEYS[4] -> blocked hash (failed job ID -> chain links held behind it)
-- ARGV[1] -> "create" or "add"
-- ARGV[2] -> jobs added, each link of a chain counted; for "add", a
--            negative count takes back an add whose push failed
-- ARGV[3] -> lifetime of the batch's keys in ms, from now
-- ARGV[4] -> nonce of this call (random, from the caller)
-- ARGV[5..] -> for "create": field, value pairs of the batch's options
--
-- Returns: {total, pending}.
-- Errors: "BATCH_EXISTS" (create), "NO_BATCH" (add to a batch that is
-- unknown or expired), "BATCH_FINISHED" (add to a batch whose jobs have
-- all succeeded), "WRONGTYPE <key> ..." if the state hash holds another
-- type, "ERR field <name> of <key> ..." (add) if its total or pending
-- count is not an integer. An error changes nothing: Redis keeps what a
-- script wrote before a command of it failed, so everything that can
-- fail is checked before the first write.
--
-- The Redis client sends a call again when the connection broke before
-- its reply came. Each call records its nonce in the state hash (field
-- "call:<nonce>"), and a run that finds it there changes nothing and
-- returns the counts: a create made again is not refused as existing,
-- and an add made again does not count its jobs twice.

-- uses: wrong_type

-- counters returns the named counters of the state hash as numbers, a
-- missing one as 0; or nil and an error reply naming the first that is
-- not an integer, which HINCRBY or the sums below would fail on.
-- uses: counters

local bad = wrongType({1, 'hash'})
if bad then return bad end

-- uses: now_ms
local now = string.format('%d', nowMs())
local n = tonumber(ARGV[2])
local nonce = 'call:' .. ARGV[4]

local function counts()
  local c = redis.call('HMGET', KEYS[1], 'total', 'pending')
  return {tonumber(c[1]), tonumber(c[2])}
end

if redis.call('HEXISTS', KEYS[1], nonce) == 1 then
  return counts()
end
if ARGV[1] == 'create' then
  if redis.call('EXISTS', KEYS[1]) == 1 then
    return redis.error_reply('BATCH_EXISTS batch exists already')
  end
  redis.call('HSET', KEYS[1], 'total', ARGV[2], 'pending', ARGV[2], 'failed', 0, 'blocked', 0, 'created_at', now)
  for i = 5, #ARGV, 2 do
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
else
  if redis.call('EXISTS', KEYS[1]) == 0 then
    return redis.error_reply('NO_BATCH no such batch (unknown, or expired)')
  end
  if n > 0 and redis.call('HEXISTS', KEYS[1], 'finished_at') == 1 then
    return redis.error_reply('BATCH_FINISHED every job of the batch has succeeded')
  end
  local ok, err = counters({'total', 'pending'})
  if not ok then return err end
  redis.call('HINCRBY', KEYS[1], 'total', n)
  redis.call('HINCRBY', KEYS[1], 'pending', n)
end
redis.call('HSET', KEYS[1], nonce, '1')

for k = 1, 4 do
  redis.call('PEXPIRE', KEYS[k], tonumber(ARGV[3]))
end
return counts()
