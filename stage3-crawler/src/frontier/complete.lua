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
-- queue), {-3} if its record is not JSON, or the page's num_urls and
-- num_new_urls, then `see`'s codes.
if not crawl_exists() then return {{}, {-2}} end
-- Everything that can fail, before the first write: Redis does not undo a
-- script's writes when it fails halfway.
local batch, i, wanted = {}, 2, tonumber(ARGV[1]) or 0
while i + 10 <= #ARGV do
  local links = tonumber(ARGV[i + 10]) or 0
  local ok, record = pcall(cjson.decode, ARGV[i + 3])
  table.insert(batch, {
    url = ARGV[i], token = ARGV[i + 1], delay = ARGV[i + 2],
    urls = tonumber(ARGV[i + 4]) or 0, new = tonumber(ARGV[i + 5]) or 0,
    record = ok and type(record) == 'table' and record or nil,
    group = i + 6,
  })
  i = i + 11 + 5 * links
end
local now = now_ms()
local results, ring, hosts = {}, false, {}
for _, c in ipairs(batch) do
  local held = redis.call('HGET', P .. 'held', c.url)
  local holder, host
  if held then holder, host = held_parts(held) end
  if not c.record then
    table.insert(results, {-3})
  elseif holder ~= c.token then
    table.insert(results, {-1})
  else
    redis.call('ZREM', P .. 'leases', c.url)
    redis.call('HDEL', P .. 'held', c.url)
    redis.call('HINCRBY', P .. 'busy', host, -1)
    if c.delay ~= '' then
      redis.call('HSET', P .. 'delay', host, c.delay)
      -- now is cut to whole milliseconds, so it may be up to 1 ms early:
      -- with a delay, the next request may start a millisecond later,
      -- never sooner than the delay after this one ended.
      local delay = tonumber(c.delay)
      if delay > 0 then delay = delay + 1 end
      redis.call('HSET', P .. 'next', host, now + delay)
    end
    local codes, urls, new = see(c.group, now)
    urls, new = urls + c.urls, new + c.new
    if c.record.num_urls ~= nil then
      c.record.num_urls = urls
      c.record.num_new_urls = new
    end
    redis.call('HSET', P .. 'report', c.url, cjson.encode(c.record))
    redis.call('DECR', P .. 'pending')
    hosts[host] = true
    for _, code in ipairs(codes) do ring = ring or code == 1 end
    table.insert(codes, 1, new)
    table.insert(codes, 1, urls)
    table.insert(results, codes)
  end
end
local pending = tonumber(redis.call('GET', P .. 'pending') or '0')
for host in pairs(hosts) do
  wake(host, now)
  ring = ring or redis.call('LLEN', P .. 'q:' .. host) > 0
end
-- Processes with nothing to do wait on the doorbell: ring it when there
-- is something new to claim, or the crawl is over.
if ring or pending <= 0 then
  redis.call('PUBLISH', P .. 'bell', '')
end
local claimed = {}
if wanted > 0 and pending > 0 then
  requeue_expired(now)
  take_ready(wanted, now, claimed)
end
table.insert(results, 1, claimed)
return results
-- ANCHOR_END: complete
