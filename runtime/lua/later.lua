-- later: add jobs to a queue's delayed set, due after a delay.
--
-- KEYS[1] -> delayed zset
-- KEYS[2] -> payloads hash
-- KEYS[3] -> notify list (doorbell)
-- KEYS[4] -> calls hash of the span of time the call was made in (nonce or
--            token -> what the call did)
-- ARGV[1] -> delay in ms
-- ARGV[2] -> how long to keep the calls hash after its first write, in ms
--            (0: record nothing)
-- ARGV[3] -> nonce of this call (random, from the caller)
-- ARGV[4..] -> pairs: job ID, encoded envelope
--
-- Returns: the number of jobs added.
-- Errors: "DUPLICATE <id>" if a job ID exists already with another
-- payload; nothing is added then. A job that exists with the same
-- payload is skipped: that is this very call, made again. A job ID named
-- twice in this call is held to the same rules, against its first pair.
-- "WRONGTYPE <key> ..." if a key it writes holds another type; nothing
-- is written then. The keys are checked before the first write, as in
-- push.lua.
--
-- The doorbell rings when the new jobs fall due before every job already
-- delayed, so a waiting worker shortens its wait.
--
-- A call made again by the Redis client, after its reply was lost, finds
-- its nonce recorded and adds nothing, as in push.lua.

local keep = tonumber(ARGV[2])
local nonce = ARGV[3]

-- uses: wrong_type, call_record

-- As in push.lua, the doorbell is read here, for the ring at the end, so
-- that a wrong type fails before any write; the delayed set and the
-- payloads are checked; the calls hash needs no check, as its HSETNX is
-- the first write. pcall lets the errors name their keys.
local rung = redis.pcall('LLEN', KEYS[3])
if type(rung) == 'table' then return typeError(KEYS[3], 'list') or rung end
local bad = typeError(KEYS[1], 'zset') or typeError(KEYS[2], 'hash')
if bad then return bad end

local recorded = recordCall(KEYS[4], nonce, keep)
if recorded then return recorded end

-- The clock is rounded up, so a job never falls due early: migrate moves
-- it when the clock, rounded down, has reached its due time.
-- uses: now_ms
local due = nowMsUp() + tonumber(ARGV[1])
local dues = string.format('%d', due)

-- Pairs are read 500 at a time, so unpack never passes 1000 values.
-- seen holds the payload of each job ID this call adds: an ID it names
-- twice meets the rules of an ID that exists already.
-- Tables are filled through counters: #t costs a search per append.
local chunks, seen = {}, {}
for s = 4, #ARGV, 1000 do
  local ids, k = {}, 0
  for i = s, math.min(s + 999, #ARGV), 2 do
    k = k + 1
    ids[k] = ARGV[i]
  end
  local found = redis.call('HMGET', KEYS[2], unpack(ids))
  local args, members, f = {}, {}, 0
  for j = 1, k do
    local id, payload = ids[j], ARGV[s + 2 * j - 1]
    local have = found[j] or seen[id]
    if not have then
      seen[id] = payload
      args[f + 1], args[f + 2] = id, payload
      members[f + 1], members[f + 2] = dues, id
      f = f + 2
    elseif have ~= payload then
      -- Nothing is added, so a retry must be refused as well.
      if keep > 0 then redis.call('HDEL', KEYS[4], nonce) end
      return redis.error_reply('DUPLICATE ' .. id)
    end
  end
  chunks[#chunks + 1] = {args, members}
end

local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local n = 0
for _, c in ipairs(chunks) do
  if #c[1] > 0 then
    redis.call('HSET', KEYS[2], unpack(c[1]))
    redis.call('ZADD', KEYS[1], unpack(c[2]))
    n = n + #c[1] / 2
  end
end

if n > 0 and (head[2] == nil or due < tonumber(head[2])) and rung == 0 then
  redis.call('RPUSH', KEYS[3], '1')
end
return n
