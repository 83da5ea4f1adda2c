-- Notes when the crawl was first found finished, on the server's clock
-- (on a cluster, where no one shard's claim can tell).
if not crawl_exists() then return -2 end
redis.call('HSETNX', P .. 'meta', 'finished', now_ms())
return 1
