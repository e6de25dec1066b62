-- lib attempt_errors: addAttemptError(key, id, rec, keep) appends record
-- rec, "<unix ms> <attempt> <message>", to job id's entry in the errors
-- hash key, whose records are separated by the byte 30 (ASCII RS, which
-- no message holds: the caller takes it out), and keeps the last keep.
local function addAttemptError(key, id, rec, keep)
  local v = redis.call('HGET', key, id)
  if v then v = v .. '\30' .. rec else v = rec end
  local n = 1
  for _ in string.gmatch(v, '\30') do n = n + 1 end
  while n > keep do
    v = string.sub(v, string.find(v, '\30', 1, true) + 1)
    n = n - 1
  end
  redis.call('HSET', key, id, v)
end
