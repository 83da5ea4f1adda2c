-- ANCHOR: complete
-- Completes leased URLs, as many as the process finished since its last
-- call: one script for them all, since a script's own cost in Redis is
-- more than the commands it runs; then claims up to ARGV[1] URLs for the
-- workers this frees, as claim.lua would, so that a busy process needs no
-- script call of its own to get more work. The rest of ARGV holds, for
-- each URL: the URL, the lease's token, the host's delay in ms as this
-- process learned it ('' if it did not), the URL's record for the report,
-- how many of the page's links count in its num_urls and num_new_urls
-- without coming here (links the process knows are seen, and, on a
-- cluster, links whose hosts live on other shards, offered to theirs
-- first: see.lua), and then the page's links in one of `see`'s groups.
-- Each URL all at once, or not at all: a crash between recording the page
-- and queueing its links would lose the links; between queueing them and
-- releasing the lease would count the page twice. Returns first the URLs
-- claimed, as claim.lua's 'work' lists them (without the 'work'); then
-- {-2} if the crawl is gone from Redis, else, for each URL in order, {-1}
-- if the lease is no longer ours (it ran out, and the URL went back to the
-- queue), or the page's num_urls and num_new_urls, then `see`'s codes.
if not crawl_exists() then return {{}, {-2}} end
-- The arguments, read before the first write.
local batch, i, wanted = {}, 2, tonumber(ARGV[1]) or 0
while i + 10 <= #ARGV do
  local links = tonumber(ARGV[i + 10]) or 0
  table.insert(batch, {
    url = ARGV[i], token = ARGV[i + 1], delay = ARGV[i + 2], record = ARGV[i + 3],
    urls = tonumber(ARGV[i + 4]) or 0, new = tonumber(ARGV[i + 5]) or 0,
    group = i + 6,
  })
  i = i + 11 + 5 * links
end
local now = now_ms()
local urls = {}
for _, c in ipairs(batch) do table.insert(urls, c.url) end
local helds = hmget(P .. 'held', urls)
local results, done, freed = {}, {}, {}
for k, c in ipairs(batch) do
  local holder, host
  if helds[k] then holder, host = held_parts(helds[k]) end
  if holder ~= c.token then
    table.insert(results, {-1})
  else
    table.insert(done, c.url)
    freed[host] = (freed[host] or 0) + 1
    if c.delay ~= '' then
      redis.call('HSET', P .. 'delay', host, c.delay)
      caps[host] = nil
      -- now is cut to whole milliseconds, so it may be up to 1 ms early:
      -- with a delay, the next request may start a millisecond later,
      -- never sooner than the delay after this one ended.
      local delay = tonumber(c.delay) or 0
      if delay > 0 then redis.call('HSET', P .. 'next', host, now + delay + 1) end
    end
    local codes, num_urls, new = see(c.group)
    num_urls, new = num_urls + c.urls, new + c.new
    if string.sub(c.url, 1, 1) == '~' then
      -- A sitemap: no URL of the report; what reading it came to, if it
      -- was read.
      if c.record ~= '' then
        redis.call('HSET', P .. 'sitemaps', string.sub(c.url, 2), c.record)
      end
    else
      -- The record as the process sent it, after the page's counts, which
      -- only Redis knows (`Frontier::records` puts them in).
      table.insert(gathered.report, c.url)
      table.insert(gathered.report, '=' .. num_urls .. ' ' .. new .. '\n' .. c.record)
    end
    table.insert(codes, 1, new)
    table.insert(codes, 1, num_urls)
    table.insert(results, codes)
  end
end
-- The leases, all at once.
many('ZREM', P .. 'leases', done)
many('HDEL', P .. 'held', done)
for host, n in pairs(freed) do
  redis.call('HINCRBY', P .. 'busy', host, -n)
  gathered.touched[host] = true
end
local queued = gathered.queued + gathered.sitemaps > 0
local pending, waiting = flush(now, #done)
-- With --max-depth, these may have been the last URLs of their level.
if next_level() then
  flush(now, 0)
  queued = true
end
local claimed = {}
if wanted > 0 and pending > 0 then
  requeue_expired(now)
  take_ready(wanted, now, claimed)
end
-- Processes with nothing to do wait on the doorbell: ring it when the
-- crawl is over, or when there is something new (URLs queued, or a freed
-- host with URLs waiting) that this process did not take itself: some
-- host is still ready, now or once its delay ends. A ring this process
-- made no use of would wake every idle process for a claim that finds
-- nothing.
if pending <= 0 or ((queued or waiting) and redis.call('ZCARD', P .. 'ready') > 0) then
  redis.call('PUBLISH', P .. 'bell', '')
end
table.insert(results, 1, claimed)
return results
-- ANCHOR_END: complete
