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

local bad = wrongType({1, 'hash'})
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local c, err = counters({'pending', 'failed', 'blocked'})
if not c then return err end
local id = ARGV[2]
redis.call('HSET', KEYS[1], ARGV[1] .. ':done', '1')

local pending, failed, blocked = c[1], c[2], c[3]

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
local function catchWaits()
  local by = redis.call('HGET', KEYS[1], 'catch:by')
  return by and by ~= id and redis.call('HEXISTS', KEYS[1], 'catch:done') == 0
end
local out = claim('finally', pending - failed - blocked <= 0 and not catchWaits())

for k = 1, 4 do
  redis.call('PEXPIRE', KEYS[k], tonumber(ARGV[3]))
end
return out
