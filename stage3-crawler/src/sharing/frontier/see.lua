-- ANCHOR: see_script
-- On a cluster, the links of a page whose hosts live on this shard, sent
-- here before the page is completed on its own shard (complete.lua): ARGV
-- holds `see`'s groups, one per page. First the links, then the page: a
-- crash in between leaves the page leased, so it is fetched again and its
-- links offered again, which `see` answers as it did the first time.
-- Until the page is completed, its own shard's `pending` counts it, so the
-- crawl cannot look finished while its links are on their way (the
-- process renews the page's lease just before, and offers only the links
-- of pages whose lease it still holds). Returns {{-2}} if the crawl is
-- gone from this shard, else, per group, the page's num_urls and
-- num_new_urls here, then `see`'s codes.
if not crawl_exists() then return {{-2}} end
local i, results = 1, {}
while i + 4 <= #ARGV do
  local codes, urls, new, next = see_group(i)
  table.insert(codes, 1, new)
  table.insert(codes, 1, urls)
  table.insert(results, codes)
  i = next
end
local ring = gathered.queued + gathered.sitemaps > 0
flush(now_ms(), 0)
if ring then redis.call('PUBLISH', P .. 'bell', '') end
return results
-- ANCHOR_END: see_script
