-- push_group: add grouped jobs to a queue: each at the back of its group
-- (docs/flow-control.md), or, with a delay, to the delayed set, to go
-- back into its group when it falls due; and ring the doorbell.
--
-- KEYS[1] -> payloads hash
-- KEYS[2] -> notify list (doorbell)
-- KEYS[3] -> calls hash of the span of time the call was made in (nonce or
--            token -> what the call did)
-- KEYS[4] -> delayed zset
-- KEYS[5] -> ready list
-- KEYS[6] -> reserved zset
-- KEYS[7..12] -> the group keys (lib/groups.lua): of, wait, ring, active,
--            seq, running
-- ARGV[1] -> how long to keep the calls hash after its first write, in ms
--            (0: record nothing)
-- ARGV[2] -> nonce of this call (random, from the caller)
-- ARGV[3] -> delay in ms (0: ready now)
-- ARGV[4..] -> triples: job ID, encoded envelope, "<limit>:<group>"
--            (limit: the most jobs of the group reserved at once, 0 for
--            no limit; the group: no \0)
--
-- Returns: the number of jobs pushed.
-- Errors: "DUPLICATE <id>" if a job ID exists already with another
-- payload; nothing is pushed then. A job that exists with the same
-- payload is skipped, as in push.lua, and so is a call made again by the
-- Redis client. "ERR ..." for a malformed group argument, and
-- "WRONGTYPE <key> ..." if a key it writes holds another type; nothing
-- is written then.

local keep = tonumber(ARGV[1])
local nonce = ARGV[2]
local delay = tonumber(ARGV[3])

-- uses: wrong_type, call_record, now_ms, groups
local G = {of = 7, wait = 8, ring = 9, active = 10, seq = 11, running = 12, ready = 5, reserved = 6}

if not delay or delay < 0 or (#ARGV - 3) % 3 ~= 0 then
  return redis.error_reply('ERR push_group: want a delay of 0 or more ms and triples of ID, payload, group; nothing was written')
end
for i = 6, #ARGV, 3 do
  local l, g = string.match(ARGV[i], '^(%d+):(.*)$')
  if not l or #l > 9 or string.find(g, '\0', 1, true) then
    return redis.error_reply('ERR push_group: group of job ' .. ARGV[i - 2] .. ' is "' .. ARGV[i] .. '", not "<limit>:<group>" with no NUL in the group; nothing was written')
  end
end
local rung = redis.pcall('LLEN', KEYS[2])
if type(rung) == 'table' then return typeError(KEYS[2], 'list') or rung end
local bad = wrongType({1, 'hash', 4, 'zset', 5, 'list', 6, 'zset'}) or groupsBad(G)
if bad then return bad end

-- The payloads are checked before anything is written, 500 at a time.
local ids, payloads, cgs, n, seen = {}, {}, {}, 0, {}
for s = 4, #ARGV, 1500 do
  local chunk, k = {}, 0
  for i = s, math.min(s + 1499, #ARGV), 3 do
    k = k + 1
    chunk[k] = ARGV[i]
  end
  local found = redis.call('HMGET', KEYS[1], unpack(chunk))
  for j = 1, k do
    local i = s + 3 * (j - 1)
    local id, payload = ARGV[i], ARGV[i + 1]
    local have = found[j] or seen[id]
    if not have then
      seen[id] = payload
      n = n + 1
      ids[n], payloads[n], cgs[n] = id, payload, ARGV[i + 2]
    elseif have ~= payload then
      return redis.error_reply('DUPLICATE ' .. id)
    end
  end
end

local recorded = recordCall(KEYS[3], nonce, keep)
if recorded then return recorded end
if n == 0 then return 0 end

for s = 1, n, 500 do
  local args, e = {}, math.min(s + 499, n)
  for i = s, e do
    args[2 * (i - s) + 1], args[2 * (i - s) + 2] = ids[i], payloads[i]
  end
  redis.call('HSET', KEYS[1], unpack(args))
end

local ring = rung == 0
if delay > 0 then
  local due = nowMsUp() + delay
  local head = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
  ring = ring and (head[2] == nil or due < tonumber(head[2]))
  local dues = string.format('%d', due)
  for s = 1, n, 500 do
    local zargs, hargs, e = {}, {}, math.min(s + 499, n)
    for i = s, e do
      zargs[2 * (i - s) + 1], zargs[2 * (i - s) + 2] = dues, ids[i]
      hargs[2 * (i - s) + 1], hargs[2 * (i - s) + 2] = ids[i], cgs[i]
    end
    redis.call('ZADD', KEYS[4], unpack(zargs))
    redis.call('HSET', KEYS[G.of], unpack(hargs))
  end
else
  groupsPush(G, ids, cgs)
end
if ring then redis.call('RPUSH', KEYS[2], '1') end
return n
