-- ANCHOR: complete
-- Completes leased URLs, as many as the process finished since its last
-- call: one script for them all, since a script's own cost in Redis is
-- more than the commands it runs; then claims up to ARGV[1] URLs for the
-- workers this frees, as claim.lua would, so that a busy process needs no
-- script call of its own to get more work. The rest of ARGV holds, for
-- each URL: the URL, the lease's token, the host's delay in ms as this
-- process learned it ('' if it did not), the URL's record for the report
-- as the report keeps it (`=NUM_URLS NUM_NEW_URLS` and on the next line
-- the record: see `Frontier::records`), with the counts of the page's
-- links that do not come here (links the process knows are seen, and, on
-- a cluster, links whose hosts live on other shards, offered to theirs
-- first: see.lua), and how many links do; then, if any, the page's
-- fingerprint, the links' depth and redirects, and the links, as `see`
-- takes them. Most pages send no links, and then their record goes into
-- the report as it came: every argument, and every string a script
-- makes, costs Redis more than its bytes. Each URL all at once, or not at
-- all: a crash between recording the page and queueing its links would
-- lose the links; between queueing them and releasing the lease would
-- count the page twice. Returns first the URLs claimed, as claim.lua's
-- 'work' lists them (without the 'work'); then {-2} if the crawl is gone
-- from Redis, else, for each URL in order, {-1} if the lease is no longer
-- ours (it ran out, and the URL went back to the queue), {} if its counts
-- are as sent (no links came), or the page's num_urls and num_new_urls,
-- then `see`'s codes.
if not crawl_exists() then return {{}, {-2}} end
-- Where each URL's arguments start, read before the first write.
local starts, urls, i, wanted = {}, {}, 2, tonumber(ARGV[1]) or 0
while i + 4 <= #ARGV do
  starts[#starts + 1], urls[#urls + 1] = i, ARGV[i]
  local links = tonumber(ARGV[i + 4]) or 0
  i = i + 5
  if links > 0 then i = i + 3 + 5 * links end
end
local now = now_ms()
-- Which URLs are still ours, grant by grant, and their hosts.
local tokens = {}
for k, i in ipairs(starts) do tokens[k] = ARGV[i + 1] end
local grants, names = by_grant(urls, tokens), {}
for g, grant in ipairs(grants) do names[g] = grant.token end
local ours, hosts = {}, hmget(P .. 'grants', names)
for g, grant in ipairs(grants) do
  for n, held in ipairs(let_go(grant.token, grant.urls)) do
    if held and hosts[g] then ours[grant.at[n]] = hosts[g] end
  end
end
local results, done, freed = {}, {}, {}
for k, i in ipairs(starts) do
  local url, delay, record = urls[k], ARGV[i + 2], ARGV[i + 3]
  local host = ours[k]
  if not host then
    table.insert(results, {-1})
  else
    table.insert(done, url)
    freed[host] = (freed[host] or 0) + 1
    if delay ~= '' then
      redis.call('HSET', P .. 'delay', host, delay)
      caps[host] = nil
      -- now is cut to whole milliseconds, so it may be up to 1 ms early:
      -- with a delay, the next request may start a millisecond later,
      -- never sooner than the delay after this one ended.
      local ms = tonumber(delay) or 0
      -- A pause a host asked for (pause.lua) may end later: it stays.
      local at = now + ms + 1
      if ms > 0 and at > tonumber(redis.call('HGET', P .. 'next', host) or '0') then
        redis.call('HSET', P .. 'next', host, at)
      end
    end
    local sitemap = string.sub(url, 1, 1) == '~'
    local n, result = tonumber(ARGV[i + 4]) or 0, {}
    if n > 0 then
      -- The pages a sitemap lists come from its URL.
      local from = sitemap and string.sub(url, 2) or url
      local codes, num_urls, new = see(from, ARGV[i + 5], ARGV[i + 6], ARGV[i + 7], n, i + 8)
      -- The counts sent, and what `see` found.
      local sent_urls, sent_new, rest = string.match(record, '^=(%d+) (%d+)\n(.*)$')
      if not rest then sent_urls, sent_new, rest = 0, 0, record end
      num_urls, new = num_urls + tonumber(sent_urls), new + tonumber(sent_new)
      record = '=' .. num_urls .. ' ' .. new .. '\n' .. rest
      result = {num_urls, new}
      for _, code in ipairs(codes) do result[#result + 1] = code end
    end
    if sitemap then
      -- No URL of the report; what reading it came to, if it was read.
      local eol = string.find(record, '\n', 1, true)
      local outcome = eol and string.sub(record, eol + 1) or record
      if outcome ~= '' then
        redis.call('HSET', P .. 'sitemaps', string.sub(url, 2), outcome)
      end
    else
      table.insert(gathered.report, url)
      table.insert(gathered.report, record)
    end
    table.insert(results, result)
  end
end
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
