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

-- uses: wrong_type

-- counters returns the named counters of the state hash as numbers, a
-- missing one as 0; or nil and an error reply naming the first that is
-- not an integer, which HINCRBY or the sums below would fail on.
-- uses: counters

local bad = wrongType({1, 'hash', 2, 'set', 3, 'hash', 4, 'hash'})
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0, 0, 0} end
local ok, err = counters({'pending', 'failed', 'blocked'})
if not ok then return err end
-- uses: now_ms
local now = string.format('%d', nowMs())
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

-- uses: batch_claim
-- finally waits while a catch claimed by another job has not run: that
-- job claims it once its catch has run (batch_ran).
local catch = claim('catch', failed > 0, id)
local out = {counted, 0, catch, claim('finally', pending - failed - blocked <= 0 and not catchWaits(id), id)}

for k = 1, 4 do
  redis.call('PEXPIRE', KEYS[k], tonumber(ARGV[4]))
end
return out
