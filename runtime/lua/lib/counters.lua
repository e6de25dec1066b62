-- lib counters: counters(names) reads the integer fields names of
-- KEYS[1] (missing ones are 0), or returns nil and an error reply naming
-- a field that holds no integer.
local function counters(names)
  local v = redis.call('HMGET', KEYS[1], unpack(names))
  local out = {}
  for i = 1, #names do
    local s = v[i] or '0'
    if not string.match(s, '^%-?%d+$') or #s > 18 then
      return nil, redis.error_reply('ERR field ' .. names[i] .. ' of ' .. KEYS[1] .. ' holds "' .. s .. '", not an integer; nothing was written')
    end
    out[i] = tonumber(s)
  end
  return out
end
