-- ANCHOR: claim
-- Takes up to ARGV[1] URLs under a lease, each from a host that is ready
-- (a free slot, its delay over). First, the URLs whose lease ran out (a
-- process died, or stalled) go back to the head of their host's line.
-- Returns {'finished'} when no URL is queued or leased anywhere;
-- {'work', url, token, host, work, ...}; or {'wait', ms} when nothing is ready
-- yet: how long until a host's delay ends or a lease runs out.
-- The crawl's keys may be gone (a Redis restarted without its data, or
-- flushed): then `pending` reads 0, and the crawl would look finished.
if not crawl_exists() then return {'gone'} end
local now = now_ms()
local expired = redis.call('ZRANGEBYSCORE', P .. 'leases', '-inf', now)
for _, url in ipairs(expired) do
  local held = redis.call('HGET', P .. 'held', url)
  redis.call('ZREM', P .. 'leases', url)
  redis.call('HDEL', P .. 'held', url)
  if held then
    local _, host, work = held_parts(held)
    redis.call('LPUSH', P .. 'q:' .. host, work)
    redis.call('HINCRBY', P .. 'busy', host, -1)
    redis.call('INCR', P .. 'expired')
    wake(host, now)
  end
end
-- The distributed join: `pending` counts the URLs queued and not yet
-- completed, leased ones included, as the joinable queue's unfinished
-- count does.
if tonumber(redis.call('GET', P .. 'pending') or '0') <= 0 then
  redis.call('HSETNX', P .. 'meta', 'finished', now)
  return {'finished'}
end
local out, wanted, lease = {'work'}, tonumber(ARGV[1]), meta('lease')
while wanted > 0 do
  local first = redis.call('ZRANGEBYSCORE', P .. 'ready', '-inf', now, 'LIMIT', 0, 1)
  if #first == 0 then break end
  local host = first[1]
  local work = redis.call('LPOP', P .. 'q:' .. host)
  -- Our own processes wrote the work; anything else there (no URL in it)
  -- is set aside, counted, and no longer pending, rather than failing
  -- this script after the LPOP, which Redis would not undo.
  local ok, decoded = pcall(cjson.decode, work or '')
  local url = ok and type(decoded) == 'table' and decoded.url
  if work and type(url) ~= 'string' then
    redis.call('RPUSH', P .. 'unreadable', work)
    redis.call('DECR', P .. 'pending')
    work = nil
  end
  if work then
    local token = redis.call('INCR', P .. 'tokens')
    local busy = redis.call('HINCRBY', P .. 'busy', host, 1)
    redis.call('HSET', P .. 'held', url, token .. '\n' .. host .. '\n' .. work)
    redis.call('ZADD', P .. 'leases', now + lease, url)
    table.insert(out, url)
    table.insert(out, token)
    table.insert(out, host)
    table.insert(out, work)
    wanted = wanted - 1
    -- What `wake` would do, knowing more: the host stays ready (its
    -- delay, which only `complete` moves, is over already) unless that was
    -- its last free slot or its last URL, and goes to the back of the
    -- ready hosts, so that claims take turns among hosts.
    if busy >= cap(host) or redis.call('LLEN', P .. 'q:' .. host) == 0 then
      redis.call('ZREM', P .. 'ready', host)
    else
      redis.call('ZADD', P .. 'ready', now, host)
    end
  else
    wake(host, now)
  end
end
if #out > 1 then return out end
local wait = 1000
local host = redis.call('ZRANGE', P .. 'ready', 0, 0, 'WITHSCORES')
if host[2] then wait = math.min(wait, tonumber(host[2]) - now) end
local lease_end = redis.call('ZRANGE', P .. 'leases', 0, 0, 'WITHSCORES')
if lease_end[2] then wait = math.min(wait, tonumber(lease_end[2]) - now) end
return {'wait', math.max(wait, 1)}
-- ANCHOR_END: claim
