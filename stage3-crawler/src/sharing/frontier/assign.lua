-- ANCHOR: assign
-- On a cluster, the shard each host's keys live on: given out in turn the
-- first time any process asks about a host, and kept in the crawl's
-- `hosts` hash on its first shard, so every process places a host alike
-- and hosts spread evenly however their names hash. ARGV[1] is how many
-- shards the crawl has, then the hosts. Returns each host's shard
-- (0-based), or {-2} if the crawl is gone.
if not crawl_exists() then return {-2} end
local n, out = tonumber(ARGV[1]), {}
for i = 2, #ARGV do
  local shard = redis.call('HGET', P .. 'hosts', ARGV[i])
  if not shard then
    shard = (redis.call('INCR', P .. 'hosts_given') - 1) % n
    redis.call('HSET', P .. 'hosts', ARGV[i], shard)
  end
  table.insert(out, tonumber(shard))
end
return out
-- ANCHOR_END: assign
