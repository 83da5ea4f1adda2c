-- ANCHOR: claim
-- Takes up to ARGV[1] URLs under a lease, each from a host that is ready
-- (a free slot, its delay over: `take_ready`). ARGV[2] is '1' when this
-- shard is the crawl's only one, so that its end is the crawl's. First, the URLs whose lease
-- ran out go back to their hosts' lines. A process claims here when its
-- workers are idle; a busy one claims as it completes (complete.lua).
-- Returns {'finished'} when no URL is queued or leased on this shard;
-- {'work', url, token, host, work, ...}; or {'wait', ms} when nothing is ready
-- yet: how long until a host's delay ends or a lease runs out.
-- The crawl's keys may be gone (a Redis restarted without its data, or
-- flushed): then `pending` reads 0, and the crawl would look finished.
if not crawl_exists() then return {'gone'} end
local now = now_ms()
requeue_expired(now)
-- With --max-depth, the next level may start now (an unreadable URL set
-- aside may have been the last of this one).
if next_level() then flush(now, 0) end
-- The distributed join: `pending` counts the URLs queued and not yet
-- completed, leased ones included, as the joinable queue's unfinished
-- count does.
if tonumber(redis.call('GET', P .. 'pending') or '0') <= 0 then
  if ARGV[2] == '1' then
    skip_too_deep()
    redis.call('HSETNX', P .. 'meta', 'finished', now)
  end
  return {'finished'}
end
local out = take_ready(tonumber(ARGV[1]), now, {'work'})
if #out > 1 then return out end
local wait = 1000
local host = redis.call('ZRANGE', P .. 'ready', 0, 0, 'WITHSCORES')
if host[2] then wait = math.min(wait, tonumber(host[2]) - now) end
local lease_end = redis.call('ZRANGE', P .. 'leases', 0, 0, 'WITHSCORES')
if lease_end[2] then wait = math.min(wait, tonumber(lease_end[2]) - now) end
return {'wait', math.max(wait, 1)}
-- ANCHOR_END: claim
