-- lib batch_claim: a batch's callbacks of one kind run once, by the job
-- that claims them. claim(kind, cond, id) claims kind for job id if cond
-- holds and kind has callbacks not yet run: 1 if id holds the claim, 0
-- if not. catchWaits(id) says whether a catch that another job claimed
-- has not run yet: finally waits for it. KEYS[1] is the batch's state.
local function claim(kind, cond, id)
  if not cond or redis.call('HEXISTS', KEYS[1], kind) == 0 or redis.call('HEXISTS', KEYS[1], kind .. ':done') == 1 then
    return 0
  end
  local by = redis.call('HGET', KEYS[1], kind .. ':by')
  if not by then
    redis.call('HSET', KEYS[1], kind .. ':by', id)
    return 1
  end
  if by == id then return 1 end
  return 0
end
local function catchWaits(id)
  local by = redis.call('HGET', KEYS[1], 'catch:by')
  return by and by ~= id and redis.call('HEXISTS', KEYS[1], 'catch:done') == 0
end
