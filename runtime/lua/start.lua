#!lua flags=allow-oom
-- start: start held jobs (reserve.lua with ARGV[6] "1"): count the
-- attempt each is about to make, and move it to the plain token, as its
-- handler starts. A held job that never starts keeps its count.
--
-- KEYS[1] -> reserved zset
-- KEYS[2] -> state hash (job ID -> "attempts:exceptions:token")
-- ARGV[1..] -> pairs: job ID, the plain token of its reservation (the job
--              is held under "h" followed by it); at most 1000 pairs
--
-- Returns: per job, the attempt it starts as, or 0 if it is no longer
-- held under the token (its lease ran out and another worker may hold
-- it). A job found already started under the token (a call the Redis
-- client made again) returns its attempt again, counted once.
--
-- allow-oom: it rewrites state entries in place, at the same length or
-- a digit longer; a worker must be able to start what it reserved when
-- Redis is full.
--
-- Errors: "WRONGTYPE <key> ..." if a key it touches holds another type.
-- Redis keeps what a script wrote before a command of it failed, so the
-- keys are checked before the first write: it writes nothing then.

-- uses: wrong_type, now_ms

local bad = wrongType({1, 'zset', 2, 'hash'})
if bad then return bad end

local now = nowMs()
local n = #ARGV / 2
local ids = {}
for i = 1, n do ids[i] = ARGV[2 * i - 1] end
local states = redis.call('HMGET', KEYS[2], unpack(ids))
local leases = redis.call('ZMSCORE', KEYS[1], unpack(ids))

local out, sargs, k = {}, {}, 0
for j = 1, n do
  local st, lease = states[j], leases[j]
  local token = ARGV[2 * j]
  local a, x, tok
  if st then a, x, tok = string.match(st, '^(%d+):(%d+):(.*)$') end
  out[j] = 0
  if tok and lease and tonumber(lease) > now then
    if tok == 'h' .. token then
      out[j] = tonumber(a) + 1
      sargs[k + 1], sargs[k + 2] = ids[j], out[j] .. ':' .. x .. ':' .. token
      k = k + 2
    elseif tok == token then
      out[j] = tonumber(a)
    end
  end
end
if k > 0 then redis.call('HSET', KEYS[2], unpack(sargs)) end
return out
