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
-- The crawl's `see`, for every process at once, for one page's links: the
-- group at ARGV[i]. Its header: the page's URL ('' for the roots), a
-- fingerprint of it, the links' depth and redirects left, and how many
-- links follow; then five per link: the URL; its host; its path if it has
-- a query ('' if not); the reason this process's rules refuse it ('' if
-- they do not); and flags: 'c' if it counts in the page's num_urls, 'r' if
-- robots.txt disallows it (as far as this process knows). The checks run
-- in the order one process runs them. Returns a code per link (0 seen
-- before, 1 queued, 2 refused, 3 over --max-pages, 4 over
-- --max-query-variants, 5 robots.txt), the page's num_urls and
-- num_new_urls (counted as one process counts them: against the seen set
-- and query counts from before the page's links), and where the next
-- group starts.
--
-- `seen` maps each URL to what the first page that offered it was told,
-- and that page's fingerprint: the same page offering the same link again
-- gets the same answer and changes nothing. That happens when a process
-- dies after offering a page's links and before completing the page (on a
-- cluster they are two scripts on two shards), and the page is fetched
-- again.
local function see(i, now)
  local from, fp, depth, redirects = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local first, last = i + 5, i + 4 + 5 * (tonumber(ARGV[i + 4]) or 0)
  local max_pages, max_variants = meta('max_pages'), meta('max_query_variants')
  local from_json = from == '' and 'null' or cjson.encode(from)
  local function full(variant)
    return variant ~= '' and
      tonumber(redis.call('HGET', P .. 'variants', variant) or '0') >= max_variants
  end
  local function skipped(url, reason)
    redis.call('HSET', P .. 'report', url,
      '{"url":' .. cjson.encode(url) .. ',"skipped":"' .. reason .. '","from":' .. from_json .. '}')
  end
  local urls, new, counted = 0, 0, {}
  for j = first, last, 5 do
    local counts = string.find(ARGV[j + 4], 'c', 1, true) and not full(ARGV[j + 2])
    local was = redis.call('HGET', P .. 'seen', ARGV[j])
    if counts then
      urls = urls + 1
      -- New to the crawl, or this page's own link offered again.
      if not was or string.sub(was, 3) == fp then new = new + 1 end
    end
    counted[j] = counts and '1' or '0'
  end
  local codes, touched, answered = {}, {}, {}
  for j = first, last, 5 do
    local url, host, variant, refused, flags = ARGV[j], ARGV[j + 1], ARGV[j + 2], ARGV[j + 3], ARGV[j + 4]
    local was = redis.call('HGET', P .. 'seen', url)
    local code = 0
    if was then
      -- A page that links a URL twice is answered once.
      if string.sub(was, 3) == fp and not answered[url] then code = tonumber(string.sub(was, 1, 1)) end
    else
      if refused ~= '' then
        skipped(url, refused)
        code = 2
      elseif full(variant) then
        skipped(url, 'query-variants')
        code = 4
      elseif string.find(flags, 'r', 1, true) then
        skipped(url, 'robots')
        code = 5
      elseif max_pages >= 0 and tonumber(redis.call('GET', P .. 'queued') or '0') >= max_pages then
        skipped(url, 'max-pages')
        code = 3
      else
        redis.call('INCR', P .. 'queued')
        redis.call('INCR', P .. 'pending')
        if variant ~= '' then redis.call('HINCRBY', P .. 'variants', variant, 1) end
        redis.call('RPUSH', P .. 'q:' .. host, '{"url":' .. cjson.encode(url) .. ',"from":' ..
          from_json .. ',"depth":' .. depth .. ',"redirects":' .. redirects .. '}')
        touched[host] = true
        code = 1
      end
      redis.call('HSET', P .. 'seen', url, code .. counted[j] .. fp)
    end
    answered[url] = true
    table.insert(codes, code)
  end
  -- Each host that got URLs, once, however many it got.
  for host in pairs(touched) do wake(host, now) end
  return codes, urls, new, last + 1
end
-- ANCHOR_END: see
