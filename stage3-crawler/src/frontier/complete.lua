-- ANCHOR: complete
-- Completes a leased URL: ARGV[1] the URL, ARGV[2] the lease's token,
-- ARGV[3] the host's delay in ms as this process learned it ('' if it
-- did not), ARGV[4] the URL's record for the report, ARGV[5] how many of
-- the page's links the process kept to itself because it knows they are
-- seen (they count in num_urls, never in num_new_urls), and from ARGV[6]
-- the URLs it led to, in `see`'s groups. All of it at once, or nothing: a
-- crash between recording the page and queueing its links would lose the
-- links; between queueing them and releasing the lease would count the
-- page twice. Returns {-2} if the crawl is gone from Redis, {-1} if the
-- lease is no longer ours (it ran out, and the URL went back to the
-- queue); else the page's num_urls and
-- num_new_urls, then `see`'s codes.
local url, token = ARGV[1], ARGV[2]
if not crawl_exists() then return {-2} end
local held = redis.call('HGET', P .. 'held', url)
if not held then return {-1} end
local holder, host = held_parts(held)
if holder ~= token then return {-1} end
-- Everything that can fail, before the first write: Redis does not undo a
-- script's writes when it fails halfway.
local record = cjson.decode(ARGV[4])
local now = now_ms()
redis.call('ZREM', P .. 'leases', url)
redis.call('HDEL', P .. 'held', url)
redis.call('HINCRBY', P .. 'busy', host, -1)
if ARGV[3] ~= '' then
  redis.call('HSET', P .. 'delay', host, ARGV[3])
  -- now is cut to whole milliseconds, so it may be up to 1 ms early: with
  -- a delay, the next request may start a millisecond later, never sooner
  -- than the delay after this one ended.
  local delay = tonumber(ARGV[3])
  if delay > 0 then delay = delay + 1 end
  redis.call('HSET', P .. 'next', host, now + delay)
end
local codes, urls, new = see(6, now)
urls = urls + (tonumber(ARGV[5]) or 0)
if record.num_urls ~= nil then
  record.num_urls = urls
  record.num_new_urls = new
end
redis.call('HSET', P .. 'report', url, cjson.encode(record))
local pending = redis.call('DECR', P .. 'pending')
wake(host, now)
-- Processes with nothing to do wait on the doorbell: ring it when there
-- is something new to claim, or the crawl is over.
local queued = false
for _, code in ipairs(codes) do queued = queued or code == 1 end
if queued or pending <= 0 or redis.call('LLEN', P .. 'q:' .. host) > 0 then
  redis.call('PUBLISH', P .. 'bell', '')
end
table.insert(codes, 1, new)
table.insert(codes, 1, urls)
return codes
-- ANCHOR_END: complete
