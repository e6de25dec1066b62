-- batch_fail: count a job of a batch as failed for good, once per job ID,
-- cancel the batch unless it allows failures, and claim the batch's
-- callbacks that fall due.
--
-- KEYS[1] -> batch state hash
-- KEYS[2] -> done set (IDs of jobs that succeeded)
-- KEYS[3] -> failed hash (job ID -> queue, for jobs that failed for good)
-- KEYS[4] -> blocked hash (failed job ID -> chain links held behind it)
-- ARGV[1] -> job ID
-- ARGV[2] -> the job's queue (for retrying it later)
-- ARGV[3] -> links of the job's chain held behind it (dropped unless the
--            job is retried and succeeds)
-- ARGV[4] -> lifetime of the batch's keys in ms, from now
--
-- Returns: {counted, 0, catch due, finally due}: counted is 1 the first
-- time the job is counted, 0 after (or if it succeeded before), -1 if the
-- batch is gone. Claims work as in batch_done. catch: a job failed (it
-- runs once, for the first failure). finally: every job has run once,
-- and a catch claimed by another job has run.
-- The job stays pending: it may yet succeed on a retry.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type,
-- "ERR field <name> of <key> ..." if a counter of the state hash is not
-- an integer. Redis keeps what a script wrote before a command of it
-- failed, so both are checked before the first write: it writes nothing
-- then.

-- wrongType returns an error reply naming the first of kinds (pairs:
-- index into KEYS, type) whose key holds another type, if any. A missing
-- key is of every type.
local function wrongType(kinds)
  for i = 1, #kinds, 2 do
    local key, want = KEYS[kinds[i]], kinds[i + 1]
    local got = redis.call('TYPE', key).ok
    if got ~= want and got ~= 'none' then
      return redis.error_reply('WRONGTYPE ' .. key .. ' holds a ' .. got .. ', not a ' .. want .. '; nothing was written')
    end
  end
end

-- counters returns the named counters of the state hash as numbers, a
-- missing one as 0; or nil and an error reply naming the first that is
-- not an integer, which HINCRBY or the sums below would fail on.
local function counters(names)
  local v = redis.call('HMGET', KEYS[1], unpack(names))
  local out = {}
  for i = 1, #names do
    local s = v[i] or '0'
    if not string.match(s, '^%-?%d+$') or #s > 18 then
      return nil, redis.error_reply('ERR field ' .. names[i] .. ' of ' .. KEYS[1] .. ' holds "' .. s .. '", not an integer; nothing was written')
    end
    out[i] = tonumber(s)
  end
  return out
end

local bad = wrongType({1, 'hash', 2, 'set', 3, 'hash', 4, 'hash'})
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0, 0, 0} end
local ok, err = counters({'pending', 'failed', 'blocked'})
if not ok then return err end
local t = redis.call('TIME')
local now = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local id = ARGV[1]

local counted = 0
if redis.call('SISMEMBER', KEYS[2], id) == 0 and redis.call('HSETNX', KEYS[3], id, ARGV[2]) == 1 then
  counted = 1
  redis.call('HINCRBY', KEYS[1], 'failed', 1)
  local held = tonumber(ARGV[3])
  if held > 0 then
    redis.call('HSET', KEYS[4], id, held)
    redis.call('HINCRBY', KEYS[1], 'blocked', held)
  end
  if redis.call('HGET', KEYS[1], 'allow_failures') ~= '1' and redis.call('HEXISTS', KEYS[1], 'cancelled_at') == 0 then
    redis.call('HSET', KEYS[1], 'cancelled_at', now, 'cancelled_by', 'failure')
  end
end

local s = redis.call('HMGET', KEYS[1], 'pending', 'failed', 'blocked')
local pending, failed, blocked = tonumber(s[1] or 0), tonumber(s[2] or 0), tonumber(s[3] or 0)

local function claim(kind, cond)
  if not cond or redis.call('HEXISTS', KEYS[1], kind) == 0 or redis.call('HEXISTS', KEYS[1], kind .. ':done') == 1 then
    return 0
  end
  local by = redis.call('HGET', KEYS[1], kind .. ':by')
  if not by then
    redis.call('HSET', KEYS[1], kind .. ':by', id)
    return 1
  end
  if by == id then return 1 end
  return 0
end
-- finally waits while a catch claimed by another job has not run: that
-- job claims it once its catch has run (batch_ran).
local function catchWaits()
  local by = redis.call('HGET', KEYS[1], 'catch:by')
  return by and by ~= id and redis.call('HEXISTS', KEYS[1], 'catch:done') == 0
end
local catch = claim('catch', failed > 0)
local out = {counted, 0, catch, claim('finally', pending - failed - blocked <= 0 and not catchWaits())}

for k = 1, 4 do
  redis.call('PEXPIRE', KEYS[k], tonumber(ARGV[4]))
end
return out
