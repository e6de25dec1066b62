-- laravel_sizes: the jobs of a queue, by state.
--
-- KEYS[1] -> queues:NAME list (ready jobs)
-- KEYS[2] -> queues:NAME:delayed zset
-- KEYS[3] -> queues:NAME:reserved zset
--
-- Returns: {ready, delayed, reserved}.

return {redis.call('LLEN', KEYS[1]), redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3])}
