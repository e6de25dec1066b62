-- chain_push: push the next link of a chain onto its queue, once, ready,
-- delayed by a delay of its own, or into its fair group
-- (lib/enqueue.lua). The finished link is acked by a separate call
-- afterwards; if its worker dies in between, the link runs again, and
-- this call, made again, finds the marker and pushes nothing.
--
-- KEYS[1] -> the next link's marker string (same slot as the queue)
-- KEYS[2..] -> the queue's keys, as lib/enqueue.lua takes them
-- ARGV[1] -> marker lifetime in ms
-- ARGV[2..] -> the link, as lib/enqueue.lua takes its jobs (one job)
--
-- Returns: 1 if pushed; 0 if the link was pushed before (the marker is
-- set, or the ID is queued), in which case nothing changes.
--
-- Errors: "ERR enqueue: ..." for a malformed link, "WRONGTYPE <key> ..."
-- if a key it touches holds another type (the marker is replaced
-- whatever its type). Redis keeps what a script wrote before a command
-- of it failed, so the keys are checked before the first write: it
-- writes nothing then.

-- uses: wrong_type, groups, enqueue

local Q, bad = enqueueOpen(2, 2)
if not Q then return bad end
if Q.n ~= 1 then
  return redis.error_reply('ERR chain_push: want one link, got ' .. Q.n .. '; nothing was written')
end

if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('HEXISTS', KEYS[Q.b + 2], (enqueueJob(Q, 1))) == 1 then return 0 end
redis.call('SET', KEYS[1], '1', 'PX', tonumber(ARGV[1]))
return enqueueWrite(Q, nil)
