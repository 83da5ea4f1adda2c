-- Adds ARGV[1] to the crawl's count of workers (for the merged report),
-- or returns -2 if the crawl is gone: a plain HINCRBY would make `meta`
-- again, with nothing in it but the count, under a crawl just cleared.
if not crawl_exists() then return -2 end
return redis.call('HINCRBY', P .. 'meta', 'workers', ARGV[1])
