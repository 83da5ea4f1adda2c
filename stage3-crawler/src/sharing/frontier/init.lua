-- ANCHOR: init
-- Creates the crawl, or finds it. ARGV[1] is the crawl's identity (roots
-- and rules, JSON), then the numbers the scripts read (per_host,
-- max_pages, robots, delay, lease, max_query_variants, max_depth), then
-- the crawl's other shards ('' on one Redis), then the roots, in one of
-- `see`'s groups. Returns {1} if it created the crawl, or {0, identity, ready}.
-- On one Redis, creating the crawl and queueing its roots is one step,
-- and the crawl is `ready` at once: a process that joins never sees a
-- crawl that exists with nothing queued, which would look finished. On a
-- cluster the roots go to their hosts' shards after this, and the process
-- that creates the crawl marks it ready when they are queued.
local existing = redis.call('HMGET', P .. 'meta', 'identity', 'ready')
if existing[1] then return {0, existing[1], existing[2] and 1 or 0} end
-- Whatever a process of a crawl of the same name left behind after that
-- crawl was cleared (it may still have been running) is not this crawl's.
redis.call('DEL', P .. 'hosts', P .. 'hosts_given', P .. 'meta', P .. 'level', P .. 'later',
  P .. 'deep', P .. 'sitemaps', P .. 'sitemaps_queued')
redis.call('HSET', P .. 'meta', 'identity', ARGV[1], 'created', now_ms(),
  'per_host', ARGV[2], 'max_pages', ARGV[3], 'robots', ARGV[4],
  'delay', ARGV[5], 'lease', ARGV[6], 'max_query_variants', ARGV[7],
  'max_depth', ARGV[8], 'shards', ARGV[9])
if ARGV[9] == '' then
  see_group(10)
  flush(now_ms(), 0)
  redis.call('HSET', P .. 'meta', 'ready', 1)
end
return {1}
-- ANCHOR_END: init
