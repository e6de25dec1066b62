-- batch_done: count a job of a batch as succeeded, once per job ID, and
-- claim the batch's callbacks that fall due.
--
-- KEYS[1] -> batch state hash
-- KEYS[2] -> done set (IDs of jobs that succeeded)
-- KEYS[3] -> failed hash (job ID -> queue, for jobs that failed for good)
-- KEYS[4] -> blocked hash (failed job ID -> chain links held behind it)
-- ARGV[1] -> job ID
-- ARGV[2] -> lifetime of the batch's keys in ms, from now
--
-- Returns: {counted, then due, 0, finally due}: counted is 1 the first
-- time the job is counted, 0 after (a job that ran again), -1 if the
-- batch is gone. A callback is due when its condition holds and it has
-- not run: the first job to see that claims it, and it stays due for
-- that job alone, so that if its worker dies before running it, the job
-- runs again and claims it again. then: every job succeeded and the
-- batch is not cancelled. finally: every job has run once (succeeded,
-- failed for good, or is held behind a failed link of a chain), and a
-- catch claimed by another job has run, so that finally never runs
-- before catch.
--
-- A job that succeeds after failing (a retry) leaves the failed hash and
-- frees the chain links it held.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type,
-- "ERR field <name> of <key> ..." if a counter of the state hash, or the
-- job's count in the blocked hash, is not an integer. Redis keeps what a
-- script wrote before a command of it failed, so both are checked before
-- the first write: it writes nothing then.

-- uses: wrong_type

-- counters returns the named counters of the state hash as numbers, a
-- missing one as 0; or nil and an error reply naming the first that is
-- not an integer, which HINCRBY or the sums below would fail on.
-- uses: counters

local bad = wrongType({1, 'hash', 2, 'set', 3, 'hash', 4, 'hash'})
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0, 0, 0} end
-- uses: now_ms
local now = string.format('%d', nowMs())
local id = ARGV[1]
local ok, err = counters({'pending', 'failed', 'blocked'})
if not ok then return err end
local held = redis.call('HGET', KEYS[4], id) or '0'
if not string.match(held, '^%d+$') or #held > 18 then
  return redis.error_reply('ERR field ' .. id .. ' of ' .. KEYS[4] .. ' holds "' .. held .. '", not an integer; nothing was written')
end
held = tonumber(held)

local counted = redis.call('SADD', KEYS[2], id)
if counted == 1 then
  redis.call('HINCRBY', KEYS[1], 'pending', -1)
  if redis.call('HDEL', KEYS[3], id) == 1 then
    redis.call('HINCRBY', KEYS[1], 'failed', -1)
    if held > 0 then
      redis.call('HINCRBY', KEYS[1], 'blocked', -held)
      redis.call('HDEL', KEYS[4], id)
    end
  end
end

local s = redis.call('HMGET', KEYS[1], 'pending', 'failed', 'blocked', 'cancelled_at', 'finished_at')
local pending, failed, blocked = tonumber(s[1] or 0), tonumber(s[2] or 0), tonumber(s[3] or 0)
if pending <= 0 and not s[5] then
  redis.call('HSET', KEYS[1], 'finished_at', now)
end

-- uses: batch_claim
-- finally waits while a catch claimed by another job has not run: that
-- job claims it once its catch has run (batch_ran). A catch claimed by
-- this job, which failed before and has succeeded now, will not run for
-- it: the claim goes, so that it holds nothing back.
if redis.call('HGET', KEYS[1], 'catch:by') == id and redis.call('HEXISTS', KEYS[1], 'catch:done') == 0 then
  redis.call('HDEL', KEYS[1], 'catch:by')
end
local out = {counted, claim('then', pending <= 0 and not s[4], id), 0, claim('finally', pending - failed - blocked <= 0 and not catchWaits(id), id)}

for k = 1, 4 do
  redis.call('PEXPIRE', KEYS[k], tonumber(ARGV[2]))
end
return out
