-- push: add jobs to the back of a queue's ready list and ring its doorbell.
--
-- KEYS[1] -> ready list
-- KEYS[2] -> payloads hash
-- KEYS[3] -> notify list (doorbell)
-- KEYS[4] -> calls hash of the span of time the call was made in (nonce or
--            token -> what the call did)
-- ARGV[1] -> how long to keep the calls hash after its first write, in ms
--            (0: record nothing)
-- ARGV[2] -> nonce of this call (random, from the caller)
-- ARGV[3..] -> pairs: job ID, encoded envelope
--
-- Returns: the number of jobs pushed.
-- Errors: "DUPLICATE <id>" if a job ID exists already with another
-- payload; nothing is pushed then. A job that exists with the same
-- payload is skipped: that is this very push, made again. A job ID named
-- twice in this call is held to the same rules, against its first pair.
-- "WRONGTYPE <key> ..." if a key it writes holds another type; nothing
-- is written then.
--
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write. Skipping a job that exists
-- with the same payload is right only because a push never leaves a
-- payload without its ID in the ready list.
--
-- The Redis client sends a call again when the connection broke before
-- its reply came. By then the jobs of the first run may have run and been
-- acked, so that their IDs are free again: the call records its nonce
-- first, and a run that finds it there pushes nothing and returns 0.

local keep = tonumber(ARGV[1])
local nonce = ARGV[2]

-- uses: wrong_type, call_record

-- A push is the hottest call, so the checks cost what they must: the
-- doorbell is read here, where a wrong type fails before any write, for
-- the ring at the end; the ready list and the payloads are checked; and
-- the calls hash needs no check, as its HSETNX is the first write. The
-- reads run under pcall, so that their errors name their keys.
local rung = redis.pcall('LLEN', KEYS[3])
if type(rung) == 'table' then return typeError(KEYS[3], 'list') or rung end
local bad = typeError(KEYS[1], 'list') or typeError(KEYS[2], 'hash')
if bad then return bad end

local recorded = recordCall(KEYS[4], nonce, keep)
if recorded then return recorded end

-- ring rings the doorbell, unless a ring waits already.
local function ring()
  if rung == 0 then
    redis.call('RPUSH', KEYS[3], '1')
  end
end

if #ARGV == 4 then
  -- One job, the most common call: HSETNX both checks the ID and writes.
  local id, payload = ARGV[3], ARGV[4]
  if redis.call('HSETNX', KEYS[2], id, payload) == 0 then
    if redis.call('HGET', KEYS[2], id) == payload then return 0 end
    if keep > 0 then redis.call('HDEL', KEYS[4], nonce) end
    return redis.error_reply('DUPLICATE ' .. id)
  end
  redis.call('RPUSH', KEYS[1], id)
  ring()
  return 1
end

-- Pairs are read 500 at a time, so unpack never passes 1000 values.
-- seen holds the payload of each job ID this call adds: an ID it names
-- twice meets the rules of an ID that exists already.
-- Tables are filled through counters: #t costs a search per append.
local chunks, seen = {}, {}
for s = 3, #ARGV, 1000 do
  local ids, k = {}, 0
  for i = s, math.min(s + 999, #ARGV), 2 do
    k = k + 1
    ids[k] = ARGV[i]
  end
  local found = redis.call('HMGET', KEYS[2], unpack(ids))
  local args, fresh, f = {}, {}, 0
  for j = 1, k do
    local id, payload = ids[j], ARGV[s + 2 * j - 1]
    local have = found[j] or seen[id]
    if not have then
      seen[id] = payload
      args[2 * f + 1], args[2 * f + 2] = id, payload
      f = f + 1
      fresh[f] = id
    elseif have ~= payload then
      -- Nothing is pushed, so a retry must be refused as well.
      if keep > 0 then redis.call('HDEL', KEYS[4], nonce) end
      return redis.error_reply('DUPLICATE ' .. id)
    end
  end
  chunks[#chunks + 1] = {args, fresh}
end

local n = 0
for _, c in ipairs(chunks) do
  if #c[2] > 0 then
    redis.call('HSET', KEYS[2], unpack(c[1]))
    redis.call('RPUSH', KEYS[1], unpack(c[2]))
    n = n + #c[2]
  end
end
if n > 0 then ring() end
return n
