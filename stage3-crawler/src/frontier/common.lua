-- What every frontier script shares. KEYS[1] is the crawl's prefix,
-- "stage3:{NAME}:"; every key of the crawl starts with it.
local P = KEYS[1]

-- The server's clock, in milliseconds: one clock for every process, on
-- whatever machine it runs.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The crawl's numbers, read from `meta` once per script, when first
-- needed (`init` writes them before it needs them), with whether the
-- crawl's identity is there at all: one round of reading for both.
local numbers, exists
local function meta(field)
  if not numbers then
    local names = {'per_host', 'max_pages', 'robots', 'delay', 'lease', 'max_query_variants', 'identity'}
    local values = redis.call('HMGET', P .. 'meta', unpack(names))
    numbers = {}
    for i, name in ipairs(names) do numbers[name] = tonumber(values[i]) end
    exists = values[#names] ~= false
  end
  return numbers[field]
end

-- Whether the crawl is still in Redis: a Redis restarted without its
-- data, or flushed, has lost it, and `pending` would read 0.
local function crawl_exists()
  meta('lease')
  return exists
end

-- "token\nhost\nwork": who holds a leased URL, its host, and the work to
-- put back if the lease runs out.
local function held_parts(held)
  local a = string.find(held, '\n', 1, true)
  local b = string.find(held, '\n', a + 1, true)
  return string.sub(held, 1, a - 1), string.sub(held, a + 1, b - 1), string.sub(held, b + 1)
end

-- ANCHOR: cap
-- How many requests a host may have at once, summed over every process.
-- Until its rules are known, one: the process that takes a host's first
-- URL reads its robots.txt, and nobody else may hit the host meanwhile.
-- Then one if it has a delay (--delay or Crawl-delay), --per-host if not.
local function cap_now(host)
  local delay = redis.call('HGET', P .. 'delay', host)
  if not delay then
    if meta('robots') == 1 then return 1 end
    delay = meta('delay')
  end
  if tonumber(delay) > 0 then return 1 end
  return meta('per_host')
end
-- Once per host and script: a script that learns a host's delay (complete)
-- sets it before it asks.
local caps = {}
local function cap(host)
  if not caps[host] then caps[host] = cap_now(host) end
  return caps[host]
end

-- A host is in the `ready` set, scored with the earliest time its next
-- request may start, exactly when it has URLs waiting and a free slot.
local function wake(host, now)
  if redis.call('LLEN', P .. 'q:' .. host) == 0 then
    redis.call('ZREM', P .. 'ready', host)
    return
  end
  local busy = tonumber(redis.call('HGET', P .. 'busy', host) or '0')
  if busy >= cap(host) then
    redis.call('ZREM', P .. 'ready', host)
    return
  end
  local next_start = tonumber(redis.call('HGET', P .. 'next', host) or '0')
  redis.call('ZADD', P .. 'ready', math.max(now, next_start), host)
end
-- ANCHOR_END: cap

-- ANCHOR: take_ready
-- The URLs whose lease ran out (a process died, or stalled) go back to the
-- head of their host's line.
local function requeue_expired(now)
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
end

-- Leases up to `wanted` URLs, each from a host that is ready (a free slot,
-- its delay over), appending url, token, host and work for each to `out`.
local function take_ready(wanted, now, out)
  local lease = meta('lease')
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
      -- delay, which only `complete` moves, is over already) unless that
      -- was its last free slot or its last URL, and goes to the back of
      -- the ready hosts, so that claims take turns among hosts.
      if busy >= cap(host) or redis.call('LLEN', P .. 'q:' .. host) == 0 then
        redis.call('ZREM', P .. 'ready', host)
      else
        redis.call('ZADD', P .. 'ready', now, host)
      end
    else
      wake(host, now)
    end
  end
  return out
end
-- ANCHOR_END: take_ready

-- ANCHOR: see
-- The crawler's `see`, for every process at once. ARGV from `first` to
-- `last` holds a group of nine per URL: the URL; its host; the work to queue;
-- its skipped record if this process's rules refuse it ('' if not); its
-- path if it has a query ('' if not), and its skipped record should that
-- path have had --max-query-variants queries queued already; its skipped
-- record if robots.txt disallows it ('' if not); its skipped record
-- should --max-pages be reached; and '1' if it is a page's link that
-- counts in the page's num_urls. The checks run in the order one process
-- runs them. Returns a code per URL (0 seen before, 1 queued, 2 refused,
-- 3 over --max-pages, 4 over --max-query-variants, 5 robots.txt), and the
-- page's num_urls and num_new_urls, counted as one process counts them:
-- against the seen set and query counts from before the page's links.
local function see(first, last, now)
  local max_pages, max_variants = meta('max_pages'), meta('max_query_variants')
  local function full(variant)
    return variant ~= '' and
      tonumber(redis.call('HGET', P .. 'variants', variant) or '0') >= max_variants
  end
  local urls, new = 0, 0
  for i = first, last, 9 do
    if ARGV[i + 8] == '1' and not full(ARGV[i + 4]) then
      urls = urls + 1
      if redis.call('SISMEMBER', P .. 'seen', ARGV[i]) == 0 then new = new + 1 end
    end
  end
  local codes, touched = {}, {}
  for i = first, last, 9 do
    local url, host, work, refused = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
    local variant, too_many, robots, over = ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7]
    local code = 0
    if redis.call('SADD', P .. 'seen', url) == 1 then
      if refused ~= '' then
        redis.call('HSET', P .. 'report', url, refused)
        code = 2
      elseif full(variant) then
        redis.call('HSET', P .. 'report', url, too_many)
        code = 4
      elseif robots ~= '' then
        redis.call('HSET', P .. 'report', url, robots)
        code = 5
      elseif max_pages >= 0 and tonumber(redis.call('GET', P .. 'queued') or '0') >= max_pages then
        redis.call('HSET', P .. 'report', url, over)
        code = 3
      else
        redis.call('INCR', P .. 'queued')
        redis.call('INCR', P .. 'pending')
        if variant ~= '' then redis.call('HINCRBY', P .. 'variants', variant, 1) end
        redis.call('RPUSH', P .. 'q:' .. host, work)
        touched[host] = true
        code = 1
      end
    end
    table.insert(codes, code)
  end
  -- Each host that got URLs, once, however many it got.
  for host in pairs(touched) do wake(host, now) end
  return codes, urls, new
end
-- ANCHOR_END: see
