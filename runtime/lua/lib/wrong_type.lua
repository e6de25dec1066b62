-- lib wrong_type: typeError(key, want) returns an error reply naming key
-- if it holds a type other than want; wrongType(kinds) does so for the
-- first of kinds (pairs: index into KEYS, type) that does. A missing key
-- is of every type. Scripts call them before their first write: Redis
-- keeps what a script wrote before a command of it failed.
local function typeError(key, want)
  local got = redis.call('TYPE', key).ok
  if got ~= want and got ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. key .. ' holds a ' .. got .. ', not a ' .. want .. '; nothing was written')
  end
end

local function wrongType(kinds)
  for i = 1, #kinds, 2 do
    local bad = typeError(KEYS[kinds[i]], kinds[i + 1])
    if bad then return bad end
  end
end
