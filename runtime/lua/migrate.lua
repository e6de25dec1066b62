#!lua flags=allow-oom
-- migrate: move due delayed jobs and expired reservations back to ready.
--
-- KEYS[1] -> ready list
-- KEYS[2] -> delayed zset
-- KEYS[3] -> reserved zset
-- KEYS[4] -> state hash (job ID -> "attempts:exceptions:token")
-- KEYS[5] -> notify list (doorbell)
-- ARGV[1] -> limit: at most this many jobs of each kind move per call
--
-- Returns: {now ms, delayed jobs moved, expired jobs moved,
--           next due ms or -1, next lease deadline ms or -1,
--           µs past now ms}: now, to the µs, is now ms plus the last.
--
-- The moves are lib/migrate_due.lua's, which reserve runs too. An
-- expired job's token is cleared, so the worker that held it can no
-- longer ack, release, extend or fail it. Its counts are kept. A job
-- whose state entry is malformed (not "attempts:exceptions:token") moves
-- with its entry as it is: the reserve that takes it hands it to its
-- worker to fail (reserve.lua). One bad entry holds up no other job.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then. The
-- sets are checked at once, the other keys only when a job is due.
--
-- allow-oom: it takes no new memory. Jobs move from the delayed and
-- reserved sets to the ready list, and expired ones lose their token.

-- uses: wrong_type, now_ms, migrate_due
local now, us = nowMs()
local delayed, expired, next_due, next_expiry = migrateDue({1, 2, 3, 4, 5}, tonumber(ARGV[1]), now)
if expired == nil then return delayed end
return {now, delayed, expired, next_due, next_expiry, us}
