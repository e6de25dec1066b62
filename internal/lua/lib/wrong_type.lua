-- lib wrong_type: wrongType(kinds) returns an error reply naming the
-- first of kinds (pairs: index into KEYS, type) whose key holds another
-- type, if any. A missing key is of every type. Scripts call it before
-- their first write: Redis keeps what a script wrote before a command of
-- it failed.
local function wrongType(kinds)
  for i = 1, #kinds, 2 do
    local key, want = KEYS[kinds[i]], kinds[i + 1]
    local got = redis.call('TYPE', key).ok
    if got ~= want and got ~= 'none' then
      return redis.error_reply('WRONGTYPE ' .. key .. ' holds a ' .. got .. ', not a ' .. want .. '; nothing was written')
    end
  end
end
