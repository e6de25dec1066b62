-- fail: move reserved jobs into the failed store, then keep the store
-- within its bounds.
--
-- KEYS[1] -> reserved zset
-- KEYS[2] -> state hash (job ID -> "attempts:exceptions:token")
-- KEYS[3] -> payloads hash
-- KEYS[4] -> failed zset
-- KEYS[5] -> failed payloads hash
-- KEYS[6] -> failed info hash
-- KEYS[7] -> errors hash (job ID -> its last attempts' errors,
--            lib/attempt_errors.lua)
-- KEYS[8] -> failed errors hash: a failed job's entry moves here
-- KEYS[9] -> progress hash: a failed job's entry is deleted
-- KEYS[10..15] -> the group keys (optional; lib/groups.lua):
--            of, wait, ring, active, seq, running; given for a queue that
--            holds grouped jobs. A failed job frees its group's slot and
--            keeps its group, for a retry.
-- KEYS[16] -> notify list (doorbell), with the group keys: rung when a
--            group waiting for a slot gets its turn back
-- KEYS[#KEYS] -> failed trimmed hash (the last key, after KEYS[9] or
--            KEYS[16]): what trimming dropped (lib/failed_trim.lua)
-- ARGV[1] -> most failed jobs to keep (0: no limit)
-- ARGV[2] -> oldest failed job to keep, in ms of age (0: no limit)
-- ARGV[3..] -> triples: job ID, reservation token, encoded failure info
--              (at most 300 triples)
--
-- Returns: per triple, 1 if failed or 0 if the token is stale, then how
-- many old entries trimming dropped. A stale triple changes nothing. At
-- most 1000 old entries are trimmed per call.
--
-- Not allow-oom: the failure info it stores is new memory, of any size.
-- With no flags Redis judges a script command by command: past maxmemory
-- it refuses a deny-oom command only as the script's first write, and
-- this script's first write is a ZREM, so a job can still be failed.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type

local T = #KEYS
local bad = wrongType({1, 'zset', 2, 'hash', 3, 'hash', 4, 'zset', 5, 'hash', 6, 'hash', 7, 'hash', 8, 'hash', 9, 'hash', T, 'hash'})
if bad then return bad end
-- uses: groups
local G = KEYS[16] and {of = 10, wait = 11, ring = 12, active = 13, seq = 14, running = 15, reserved = 1}
bad = G and (groupsLoad().bad(G) or wrongType({16, 'list'}))
if bad then return bad end

-- uses: now_ms
local now = nowMs()
local nows = string.format('%d', now)

local ids = {}
for i = 3, #ARGV, 3 do ids[#ids + 1] = ARGV[i] end
local states = redis.call('HMGET', KEYS[2], unpack(ids))

local out = {}
for j = 1, #ids do
  local id = ids[j]
  local st = states[j]
  if st and string.match(st, '^%d+:%d+:(.+)$') == ARGV[3 * j + 1] then
    local p = redis.call('HGET', KEYS[3], id)
    redis.call('ZREM', KEYS[1], id)
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
    redis.call('ZADD', KEYS[4], nows, id)
    redis.call('HSET', KEYS[5], id, p or '')
    redis.call('HSET', KEYS[6], id, ARGV[3 * j + 2])
    redis.call('HDEL', KEYS[9], id)
    local errs = redis.call('HGET', KEYS[7], id)
    if errs then
      redis.call('HDEL', KEYS[7], id)
      redis.call('HSET', KEYS[8], id, errs)
    end
    out[j] = 1
  else
    out[j] = 0
  end
end
if G then
  local done = {}
  for j = 1, #ids do
    if out[j] == 1 then done[#done + 1] = ids[j] end
  end
  if #done > 0 and groupsLoad().free(G, done, false) > 0 and redis.call('LLEN', KEYS[16]) == 0 then
    redis.call('RPUSH', KEYS[16], '1')
  end
end

-- uses: failed_trim
out[#ids + 1] = trimFailed(KEYS[4], KEYS[5], KEYS[6], now, tonumber(ARGV[1]), tonumber(ARGV[2]), KEYS[8], KEYS[T])
return out
