-- chain_push: push the next link of a chain onto another queue, once,
-- ready or, if it has a delay of its own, delayed by it.
-- The finished link is acked by a separate call afterwards; if its
-- worker dies in between, the link runs again, and this call, made
-- again, finds the marker and pushes nothing.
--
-- KEYS[1] -> ready list of the next link's queue
-- KEYS[2] -> payloads hash of that queue
-- KEYS[3] -> notify list (doorbell) of that queue
-- KEYS[4] -> the next link's marker string (same slot as the queue)
-- KEYS[5] -> delayed zset of that queue
-- KEYS[6] -> group-of hash of that queue (job ID -> "<limit>:<group>";
--            optional, for a grouped link: lib/groups.lua); the link
--            goes into its group when reserve finds it in ready
-- ARGV[1] -> marker lifetime in ms
-- ARGV[2] -> next job ID
-- ARGV[3] -> next job's encoded envelope
-- ARGV[4] -> delay in ms; 0 pushes the link ready
-- ARGV[5] -> the link's "<limit>:<group>", with KEYS[6]
--
-- Returns: 1 if pushed; 0 if the link was pushed before (the marker is
-- set, or the ID is queued), in which case nothing changes.
--
-- A delayed link rings the doorbell only when it falls due before every
-- job already delayed, as later does.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type
-- (the marker is replaced whatever its type). Redis keeps what a script
-- wrote before a command of it failed, so the keys are checked before
-- the first write: it writes nothing then.

-- uses: wrong_type

-- uses: now_ms
local delay = tonumber(ARGV[4])
local bad = wrongType({2, 'hash', 3, 'list'}) or wrongType(delay > 0 and {5, 'zset'} or {1, 'list'})
if bad then return bad end
if KEYS[6] then
  bad = wrongType({6, 'hash'})
  if bad then return bad end
  if not ARGV[5] or not string.match(ARGV[5], '^%d+:') or string.find(ARGV[5], '\0', 1, true) then
    return redis.error_reply('ERR chain_push: the group is "' .. tostring(ARGV[5]) .. '", not "<limit>:<group>"; nothing was written')
  end
end

if redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return 0 end
redis.call('SET', KEYS[4], '1', 'PX', tonumber(ARGV[1]))
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
if KEYS[6] then redis.call('HSET', KEYS[6], ARGV[2], ARGV[5]) end

if delay > 0 then
  local due = nowMsUp() + delay
  local head = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  redis.call('ZADD', KEYS[5], string.format('%d', due), ARGV[2])
  if (head[2] == nil or due < tonumber(head[2])) and redis.call('LLEN', KEYS[3]) == 0 then
    redis.call('RPUSH', KEYS[3], '1')
  end
  return 1
end

redis.call('RPUSH', KEYS[1], ARGV[2])
if redis.call('LLEN', KEYS[3]) == 0 then
  redis.call('RPUSH', KEYS[3], '1')
end
return 1
