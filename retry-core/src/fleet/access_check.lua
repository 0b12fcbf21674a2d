-- retry-core fleet mode: whether the store's user may run the store script's commands on the
-- keys under the fleet's prefix. Redis's ACL checks the keys a script names (KEYS) before it
-- runs, and each command the script runs while it runs: this script runs each command the
-- store script runs (store.lua), on keys no scope has (their hash tag, `{%key-check}`, is no
-- scope's encoding), in a way that leaves nothing behind.
--
-- KEYS: three keys under the prefix, of one hash tag (one cluster slot). Returns 1.

local a, b, c = KEYS[1], KEYS[2], KEYS[3]
redis.call('HGETALL', a)
redis.call('HGET', b, 'check')
redis.call('HSET', a, 'check', '1')
redis.call('HDEL', a, 'check')
redis.call('ZADD', c, '0', 'check')
redis.call('ZRANGEBYSCORE', c, '-inf', '+inf', 'LIMIT', 0, 1)
redis.call('ZREM', c, 'check')
redis.call('ZCARD', c)
redis.call('PEXPIRE', b, 1)
redis.call('TYPE', a)
redis.call('DEL', a, b, c)
return 1
