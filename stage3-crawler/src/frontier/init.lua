-- ANCHOR: init
-- Creates the crawl, or finds it. ARGV[1] is the crawl's identity (roots
-- and rules, JSON), then the numbers the scripts read (per_host,
-- max_pages, robots, delay, lease, max_query_variants), then the roots,
-- in `see`'s groups.
-- Creating it and queueing its roots is one step: a process that joins
-- never sees a crawl that exists with nothing queued, which would look
-- finished.
local existing = redis.call('HGET', P .. 'meta', 'identity')
if existing then return {0, existing} end
redis.call('HSET', P .. 'meta', 'identity', ARGV[1], 'created', now_ms(),
  'per_host', ARGV[2], 'max_pages', ARGV[3], 'robots', ARGV[4],
  'delay', ARGV[5], 'lease', ARGV[6], 'max_query_variants', ARGV[7])
see(8, #ARGV, now_ms())
return {1, ARGV[1]}
-- ANCHOR_END: init
