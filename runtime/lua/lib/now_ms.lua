-- lib now_ms: nowMs() returns the Redis clock in integer ms, and the
-- microseconds past that ms; nowMsUp() returns it rounded up, so that a
-- due time counted from it is never early.
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), tonumber(t[2]) % 1000
end
local function nowMsUp()
  local ms, us = nowMs()
  if us > 0 then return ms + 1 end
  return ms
end
