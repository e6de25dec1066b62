-- batch_ran: mark a batch's callbacks of one kind as run, and claim its
-- finally callbacks for the job if they fall due now.
--
-- KEYS[1] -> batch state hash
-- KEYS[2] -> done set (IDs of jobs that succeeded)
-- KEYS[3] -> failed hash (job ID -> queue, for jobs that failed for good)
-- KEYS[4] -> blocked hash (failed job ID -> chain links held behind it)
-- ARGV[1] -> the kind that ran: then, catch or finally
-- ARGV[2] -> ID of the job that claimed them
-- ARGV[3] -> lifetime of the batch's keys in ms, from now
--
-- Returns: 1 if the batch's finally callbacks are due for the job (it
-- claimed them, here or before, and they have not run), 0 if not, -1 if
-- the batch is gone.
--
-- finally runs after catch: while a catch claimed by one job has not run,
-- batch_done and batch_fail do not let another job claim finally. The
-- job that ran catch claims it here instead, if every job has run by now.
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

local bad = wrongType({1, 'hash'})
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local c, err = counters({'pending', 'failed', 'blocked'})
if not c then return err end
local id = ARGV[2]
redis.call('HSET', KEYS[1], ARGV[1] .. ':done', '1')

local pending, failed, blocked = c[1], c[2], c[3]

-- uses: batch_claim
local out = claim('finally', pending - failed - blocked <= 0 and not catchWaits(id), id)

for k = 1, 4 do
  redis.call('PEXPIRE', KEYS[k], tonumber(ARGV[3]))
end
return out
