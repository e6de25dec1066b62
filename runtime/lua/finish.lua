-- finish: ack finished jobs that leave something behind: a result, a
-- record of the finished job, its runtime in the queue's histogram. The
-- plain ack (ack.lua) serves every other job.
--
-- KEYS[1] -> reserved zset
-- KEYS[2] -> state hash (job ID -> "attempts:exceptions:token")
-- KEYS[3] -> payloads hash
-- KEYS[4] -> errors hash (job ID -> its last attempts' errors): every job
--            acked loses its entry, as in ack.lua; a job recorded as
--            finished keeps its last 3 in its record (below)
-- KEYS[5] -> progress hash (job ID -> its last progress): every job
--            acked loses its entry, as in ack.lua
-- KEYS[6] -> finished zset (job ID -> finished at, Redis unix ms)
-- KEYS[7] -> finished info hash (job ID -> encoded record)
-- KEYS[8] -> runtimes hash of the current slot ("name|bucket" -> count of
--            runtimes, "name|w<bucket>" -> count of waits)
-- KEYS[9..] -> per job of ARGV with a result, in order: its result
--              string, its done list
-- then, optionally, 7 keys for a queue that holds grouped jobs (as in
--   ack.lua; lib/groups.lua): of, wait, ring, active, seq, running, and
--   the notify list: a finished job leaves its group and frees its slot,
--   and the doorbell rings when a group gets its turn back
-- ARGV[1] -> result retention, ms
-- ARGV[2] -> lifetime of a done list, ms
-- ARGV[3] -> most finished jobs to keep (0: no limit)
-- ARGV[4] -> oldest finished job to keep, in ms of age (0: no limit)
-- ARGV[5] -> lifetime of the runtimes hash, ms
-- ARGV[6..] -> quintuples: job ID, reservation token, encoded result
--              ("" for none), encoded finished record ("" for none),
--              runtimes field ("" for none; or the runtimes field and the
--              wait field, joined by the byte 30) (at most 500
--              quintuples)
--
-- A job with a record whose earlier attempts left errors in KEYS[4]
-- keeps the last 3 of them: its record is stored as the encoded record,
-- the byte 30, then the errors as the errors hash holds them. A call
-- reads the errors hash only if it exists (one EXISTS a call): a queue
-- whose jobs do not fail pays nothing per job.
--
-- Returns: per quintuple, 1 if acked or 0 if the token is stale. A stale
-- quintuple changes nothing: no result, record or count is written for a
-- job this call did not ack. At most 1000 old records are trimmed a call;
-- a call that records one sets the finished zset and hash to expire
-- ARGV[4] ms later, when its newest record is that old, so a queue that
-- stops acking does not keep its record for ever (readers leave out the
-- records past ARGV[4] that no ack trimmed: Inspector.FinishedJobs).
--
-- Not allow-oom: results and records are new memory. With no flags Redis
-- judges a script command by command: past maxmemory it refuses a
-- deny-oom command only as the script's first write, and this script's
-- first write is a ZREM, so a job can still be acked.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type;
-- "ERR finish: ..." for arguments out of shape. Both are checked before
-- the first write: it writes nothing then.

-- uses: wrong_type

local bad = wrongType({1, 'zset', 2, 'hash', 3, 'hash', 4, 'hash', 5, 'hash', 6, 'zset', 7, 'hash', 8, 'hash'})
if bad then return bad end
local n = (#ARGV - 5) / 5
local results = 0
if n == math.floor(n) then
  for j = 1, n do
    if ARGV[3 + 5 * j] ~= '' then results = results + 1 end
  end
end
local gbase = 8 + 2 * results
if n < 1 or n ~= math.floor(n) or (#KEYS ~= gbase and #KEYS ~= gbase + 7) then
  return redis.error_reply('ERR finish: ' .. #ARGV .. ' arguments and ' .. #KEYS .. ' keys do not make whole jobs')
end
-- uses: groups
local G = #KEYS == gbase + 7 and {of = gbase + 1, wait = gbase + 2, ring = gbase + 3, active = gbase + 4, seq = gbase + 5, running = gbase + 6, reserved = 1}
bad = G and (groupsLoad().bad(G) or wrongType({gbase + 7, 'list'}))
if bad then return bad end
local retention, doneTTL = tonumber(ARGV[1]), tonumber(ARGV[2])
local maxCount, maxAge, slotTTL = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if not (retention and doneTTL and maxCount and maxAge and slotTTL) or retention < 1 or doneTTL < 1 then
  return redis.error_reply('ERR finish: retention, done lifetime, bounds and slot lifetime must be integers, the first two at least 1')
end
for k = 1, results do
  local b = typeError(KEYS[7 + 2 * k], 'string') or typeError(KEYS[8 + 2 * k], 'list')
  if b then return b end
end

-- uses: now_ms
local now = nowMs()
local nows = string.format('%d', now)

local ids = {}
for j = 1, n do ids[j] = ARGV[1 + 5 * j] end
local errs = redis.call('EXISTS', KEYS[4]) == 1
local states = redis.call('HMGET', KEYS[2], unpack(ids))

local out, recorded, counted, k = {}, false, false, 0
local done = {}
for j = 1, n do
  local id, a = ids[j], 1 + 5 * j
  if ARGV[a + 2] ~= '' then k = k + 1 end
  local st, tok = states[j], nil
  if st then tok = string.match(st, '^%d+:%d+:(.+)$') end
  if tok and tok == ARGV[a + 1] then
    done[#done + 1] = id
    redis.call('ZREM', KEYS[1], id)
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
    local rec = ARGV[a + 3]
    if errs then
      local e = rec ~= '' and redis.call('HGET', KEYS[4], id)
      if e then
        -- the last 3 records, separated by the byte 30
        local _, c = string.gsub(e, '\30', '')
        while c > 2 do
          e = string.sub(e, string.find(e, '\30', 1, true) + 1)
          c = c - 1
        end
        rec = rec .. '\30' .. e
      end
      redis.call('HDEL', KEYS[4], id)
    end
    redis.call('HDEL', KEYS[5], id)
    if ARGV[a + 2] ~= '' then
      redis.call('SET', KEYS[7 + 2 * k], ARGV[a + 2], 'PX', retention)
      redis.call('LPUSH', KEYS[8 + 2 * k], '1')
      redis.call('PEXPIRE', KEYS[8 + 2 * k], doneTTL)
    end
    if rec ~= '' then
      redis.call('ZADD', KEYS[6], nows, id)
      redis.call('HSET', KEYS[7], id, rec)
      recorded = true
    end
    local f = ARGV[a + 4]
    if f ~= '' then
      local cut = string.find(f, '\30', 1, true)
      if cut then
        redis.call('HINCRBY', KEYS[8], string.sub(f, 1, cut - 1), 1)
        redis.call('HINCRBY', KEYS[8], string.sub(f, cut + 1), 1)
      else
        redis.call('HINCRBY', KEYS[8], f, 1)
      end
      counted = true
    end
    out[j] = 1
  else
    out[j] = 0
  end
end

if G and #done > 0 and groupsLoad().free(G, done, true) > 0 and redis.call('LLEN', KEYS[gbase + 7]) == 0 then
  redis.call('RPUSH', KEYS[gbase + 7], '1')
end
if counted and slotTTL > 0 then
  redis.call('PEXPIRE', KEYS[8], slotTTL)
end
if recorded then
  local function drop(old)
    if #old == 0 then return end
    redis.call('ZREM', KEYS[6], unpack(old))
    redis.call('HDEL', KEYS[7], unpack(old))
  end
  if maxAge > 0 then
    drop(redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', '(' .. string.format('%d', now - maxAge), 'LIMIT', 0, 1000))
    redis.call('PEXPIRE', KEYS[6], maxAge)
    redis.call('PEXPIRE', KEYS[7], maxAge)
  end
  if maxCount > 0 then
    local over = redis.call('ZCARD', KEYS[6]) - maxCount
    if over > 0 then
      drop(redis.call('ZRANGE', KEYS[6], 0, math.min(over, 1000) - 1))
    end
  end
end
return out
