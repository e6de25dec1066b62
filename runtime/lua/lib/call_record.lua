-- lib call_record: recordCall(key, nonce, keep) records a call's nonce in
-- the calls hash key, kept keep ms from its first write (0: record
-- nothing). It returns 0 if the nonce was there already (the Redis client
-- sent the call again: it must do nothing), an error reply if key holds
-- another type, or nil. Its HSETNX may be the call's first write.
-- Uses wrong_type.
local function recordCall(key, nonce, keep)
  if keep <= 0 then return nil end
  local fresh = redis.pcall('HSETNX', key, nonce, '1')
  if type(fresh) == 'table' then return typeError(key, 'hash') or fresh end
  if fresh == 0 then return 0 end
  redis.call('PEXPIRE', key, keep, 'NX')
end
