-- A shard's `pending` and `queued`, read at one moment, for the end of a
-- crawl on a cluster (`Frontier::finished`). {-2} if the crawl is gone
-- from this shard: a shard that lost its data would read 0 and 0.
if not crawl_exists() then return {-2} end
return {tonumber(redis.call('GET', P .. 'pending') or '0'),
  tonumber(redis.call('GET', P .. 'queued') or '0')}
