-- What every frontier script shares. KEYS[1] is the prefix of the shard
-- the script works on, "stage3:{NAME}:" (the crawl's first shard, and on
-- one Redis its only one) or "stage3:{NAME/N}:"; every key it touches
-- starts with it.
local P = KEYS[1]

-- The server's clock, in milliseconds: one clock for every process, on
-- whatever machine it runs.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The crawl's numbers, read from `meta` once per script, when first
-- needed (`init` writes them before it needs them, and all at once, so
-- `lease` is there exactly when the crawl is): one round of reading for
-- both. Not the identity, which can be long: it would be copied into Lua
-- on every call.
local numbers, exists
local function meta(field)
  if not numbers then
    local names = {'per_host', 'max_pages', 'robots', 'delay', 'lease', 'max_query_variants',
      'max_depth'}
    local values = redis.call('HMGET', P .. 'meta', unpack(names))
    numbers = {}
    for i, name in ipairs(names) do numbers[name] = tonumber(values[i]) end
    -- A crawl made before --max-depth could be shared has none.
    numbers.max_depth = numbers.max_depth or -1
    exists = values[5] ~= false
  end
  return numbers[field]
end

-- Whether the crawl is still in Redis: a Redis restarted without its
-- data, or flushed, has lost it, and `pending` would read 0.
local function crawl_exists()
  meta('lease')
  return exists
end

-- ANCHOR: many
-- Inside a script every `redis.call` costs more than the work it asks for
-- (a fake client, the reply encoded and parsed back): about 0.4 us for an
-- HGET on our machine, measured in a loop inside one script, and as much
-- again for the Lua around it. One per URL and key added up to most of
-- what a URL cost Redis. So the scripts gather their writes and make each with one
-- command for many URLs: `HSET` with many fields, `RPUSH` with many
-- values. `many` runs `command key values...` at most a thousand values
-- at a time (Lua's `unpack` has a limit).
local function many(command, key, values)
  for i = 1, #values, 1000 do
    redis.call(command, key, unpack(values, i, math.min(i + 999, #values)))
  end
end

-- `HMGET key fields...`, a thousand fields at a time.
local function hmget(key, fields)
  local values = {}
  for i = 1, #fields, 1000 do
    local part = redis.call('HMGET', key, unpack(fields, i, math.min(i + 999, #fields)))
    for j = 1, #part do values[i + j - 1] = part[j] end
  end
  return values
end

-- The writes a script gathers for its end (`flush`): records for the
-- report (field, value, ...); each host's new work, in the order found;
-- how many URLs were queued; and the hosts whose line changed.
local function new_gathered()
  return {report = {}, work = {}, hosts = {}, queued = 0, sitemaps = 0, touched = {}}
end
local gathered = new_gathered()
-- ANCHOR_END: many

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
-- Once per host and script; `complete` forgets it when it learns the
-- host's delay.
local caps = {}
local function cap(host)
  if not caps[host] then caps[host] = cap_now(host) end
  return caps[host]
end

-- A host is in the `ready` set, scored with the earliest time its next
-- request may start, exactly when it has URLs waiting and a free slot.
-- Returns whether it has URLs waiting.
local function wake(host, now)
  if redis.call('LLEN', P .. 'q:' .. host) == 0 then
    redis.call('ZREM', P .. 'ready', host)
    return false
  end
  local busy = tonumber(redis.call('HGET', P .. 'busy', host) or '0')
  if busy >= cap(host) then
    redis.call('ZREM', P .. 'ready', host)
    return true
  end
  local next_start = tonumber(redis.call('HGET', P .. 'next', host) or '0')
  redis.call('ZADD', P .. 'ready', math.max(now, next_start), host)
  return true
end
-- ANCHOR_END: cap

-- Makes the writes gathered, and wakes each host whose line changed.
-- `pending` moves by the URLs and sitemaps queued less `done`, the URLs
-- (and sitemaps) completed. `queued` counts both, and only grows (the end
-- on a cluster reads it); `sitemaps_queued` says how much of it is
-- sitemaps, which --max-pages does not count.
-- Returns `pending` as it is now, and whether any host woken has URLs
-- waiting.
local function flush(now, done)
  many('HSET', P .. 'report', gathered.report)
  for _, host in ipairs(gathered.hosts) do
    many('RPUSH', P .. 'q:' .. host, gathered.work[host])
  end
  local queued = gathered.queued + gathered.sitemaps
  if queued > 0 then redis.call('INCRBY', P .. 'queued', queued) end
  if gathered.sitemaps > 0 then
    redis.call('INCRBY', P .. 'sitemaps_queued', gathered.sitemaps)
  end
  local pending = redis.call('INCRBY', P .. 'pending', queued - done)
  local waiting = false
  for host in pairs(gathered.touched) do waiting = wake(host, now) or waiting end
  gathered = new_gathered()
  return pending, waiting
end

-- A URL's work, to the back of its host's line when the script flushes.
local function line_up(host, work)
  if not gathered.work[host] then
    gathered.work[host] = {}
    gathered.hosts[#gathered.hosts + 1] = host
  end
  local line = gathered.work[host]
  line[#line + 1] = work
  gathered.touched[host] = true
end

-- "a\nb": a and b, split at the first line break; nil if there is none.
local function first_line(text)
  local eol = string.find(text, '\n', 1, true)
  if not eol then return nil end
  return string.sub(text, 1, eol - 1), string.sub(text, eol + 1)
end

-- The depth in a work's four lines (url, from, depth, redirects).
local function work_depth(work)
  local a = string.find(work, '\n', 1, true)
  local b = a and string.find(work, '\n', a + 1, true)
  local c = b and string.find(work, '\n', b + 1, true)
  return c and tonumber(string.sub(work, b + 1, c - 1))
end

-- ANCHOR: levels
-- --max-depth, for every process at once. The lesson goes level by level
-- (depth.rs): no URL of depth d + 1 starts while one of depth d is
-- unfinished. Here the hosts' lines hold only the level in progress,
-- `level`; a URL found deeper waits in `later` (URL -> host and work)
-- until that level is done, and one deeper than the limit waits in `deep`
-- (URL -> the page that found it), to be skipped at the end unless a
-- redirect brings it closer. A crawl with --max-depth has one shard, so
-- `pending` is the whole crawl's: the level is done when every URL still
-- pending is one waiting in `later`.
local current_level
local function level()
  if not current_level then
    current_level = tonumber(redis.call('GET', P .. 'level') or '0') or 0
  end
  return current_level
end

-- If the level in progress is done, the next one starts: the URLs of the
-- lowest depth waiting in `later` join their hosts' lines (at the
-- script's flush). All of them in one script, however many: a level is
-- one step for every process. Returns whether a level started.
local function next_level()
  if meta('max_depth') < 0 then return false end
  local waiting = redis.call('HLEN', P .. 'later')
  if waiting == 0 then return false end
  if tonumber(redis.call('GET', P .. 'pending') or '0') > waiting then return false end
  local all = redis.call('HGETALL', P .. 'later')
  local entries, lowest, moved, bad = {}, nil, {}, {}
  for i = 1, #all, 2 do
    local host, work = first_line(all[i + 1])
    local depth = work and work_depth(work)
    if depth then
      entries[#entries + 1] = {all[i], host, work, depth}
      if not lowest or depth < lowest then lowest = depth end
    else
      -- Not ours to read: set aside, and no longer pending.
      bad[#bad + 1] = all[i + 1]
      moved[#moved + 1] = all[i]
    end
  end
  for _, e in ipairs(entries) do
    if e[4] == lowest then
      line_up(e[2], e[3])
      moved[#moved + 1] = e[1]
    end
  end
  many('HDEL', P .. 'later', moved)
  if #bad > 0 then
    many('RPUSH', P .. 'unreadable', bad)
    redis.call('DECRBY', P .. 'pending', #bad)
  end
  if lowest then
    redis.call('SET', P .. 'level', lowest)
    current_level = lowest
  end
  return true
end

-- ANCHOR_END: levels

-- At the end: what is still too deep is skipped, in the report as any
-- refused URL is (see `see`).
local function skip_too_deep()
  local deep = redis.call('HGETALL', P .. 'deep')
  if #deep == 0 then return end
  local report = {}
  for i = 1, #deep, 2 do
    report[#report + 1] = deep[i]
    report[#report + 1] = '-depth\n' .. deep[i + 1]
  end
  many('HSET', P .. 'report', report)
  redis.call('DEL', P .. 'deep')
end


-- ANCHOR: grants
-- A claim leases a host's URLs together, as one grant, with a token from
-- `tokens`: the grant's deadline is in `leases` (token -> when it runs
-- out), its host in `grants` (token -> host), the URLs it still holds in
-- the hash `grant:TOKEN` (URL -> '1'; Redis drops the key with its last
-- field) and their work, in the order taken, in the list `works:TOKEN`,
-- for when it runs out. A grant's URLs run out together and are renewed
-- together: one process took them at once. So a URL leased costs one
-- short field, in a hash as small as a claim, where a lease of its own
-- would cost an entry in a sorted set of every lease (each insert and
-- removal a search, and a number parsed or printed) and a field in a hash
-- of every URL leased: Redis keeps a hash of up to 128 short fields as one
-- packed string, and finds a field in it by reading from the start.
local function end_grant(token)
  redis.call('ZREM', P .. 'leases', token)
  redis.call('HDEL', P .. 'grants', token)
  redis.call('DEL', P .. 'grant:' .. token, P .. 'works:' .. token)
end

-- `urls` grouped by grant, the token of urls[k] being tokens[k], in the
-- order the grants first come: for each, its token, its URLs, and where
-- they are in `urls`.
local function by_grant(urls, tokens)
  local grants, of = {}, {}
  for k, token in ipairs(tokens) do
    local grant = of[token]
    if not grant then
      grant = {token = token, urls = {}, at = {}}
      of[token] = grant
      grants[#grants + 1] = grant
    end
    grant.urls[#grant.urls + 1] = urls[k]
    grant.at[#grant.at + 1] = k
  end
  return grants
end

-- ARGV as pairs of URL and token (renew.lua, release.lua): the URLs and
-- the tokens.
local function leases_in_argv()
  local urls, tokens = {}, {}
  for i = 1, #ARGV, 2 do
    urls[#urls + 1] = ARGV[i]
    tokens[#tokens + 1] = ARGV[i + 1]
  end
  return urls, tokens
end

-- Which of `urls` (a table of them) the grant `token` still holds, as
-- true or false; those it holds it holds no longer, and a grant left
-- with none is over.
local function let_go(token, urls)
  local key = P .. 'grant:' .. token
  local held, ours = hmget(key, urls), {}
  for k = 1, #urls do
    held[k] = held[k] ~= false and held[k] ~= nil
    if held[k] then ours[#ours + 1] = urls[k] end
  end
  if #ours > 0 then
    many('HDEL', key, ours)
    if redis.call('EXISTS', key) == 0 then end_grant(token) end
  end
  return held
end

-- The works of the grant `token`'s URLs in `urls` (a set), in the order
-- they were taken; each URL found is taken out of `urls`.
local function works_of(token, urls)
  local out = {}
  for _, work in ipairs(redis.call('LRANGE', P .. 'works:' .. token, 0, -1)) do
    local eol = string.find(work, '\n', 1, true)
    local url = eol and string.sub(work, 1, eol - 1)
    if url and urls[url] then
      out[#out + 1] = work
      urls[url] = nil
    end
  end
  return out
end

-- Puts `works` back at the head of `host`'s line, in their order, and
-- frees their slots.
local function put_back(host, works, now)
  local reversed = {}
  for k = #works, 1, -1 do reversed[#reversed + 1] = works[k] end
  many('LPUSH', P .. 'q:' .. host, reversed)
  redis.call('HINCRBY', P .. 'busy', host, -#works)
  wake(host, now)
end

-- The grants that ran out (a process died, or stalled): the URLs they
-- still hold go back to the head of their host's line.
local function requeue_expired(now)
  local expired = redis.call('ZRANGEBYSCORE', P .. 'leases', '-inf', now)
  for _, token in ipairs(expired) do
    local left = redis.call('HKEYS', P .. 'grant:' .. token)
    if #left > 0 then
      local urls = {}
      for _, url in ipairs(left) do urls[url] = true end
      local host = redis.call('HGET', P .. 'grants', token)
      local works = host and works_of(token, urls) or {}
      if #works > 0 then
        put_back(host, works, now)
        redis.call('INCRBY', P .. 'expired', #works)
      end
      -- What is left has no work to put back (written by something
      -- else): set aside, and no longer pending.
      local lost = {}
      for url in pairs(urls) do lost[#lost + 1] = url end
      if #lost > 0 then
        many('RPUSH', P .. 'unreadable', lost)
        redis.call('DECRBY', P .. 'pending', #lost)
      end
    end
    end_grant(token)
  end
end
-- ANCHOR_END: grants

-- ANCHOR: take_ready
-- Leases up to `wanted` URLs from hosts that are ready (a free slot, its
-- delay over), appending url, token, host and work for each to `out`.
-- From each host as many as its free slots allow, as one grant, with one
-- command per step for all of them, and then the host goes to the back of
-- the ready hosts, so that claims take turns among hosts.
local function take_ready(wanted, now, out)
  local lease = meta('lease')
  while wanted > 0 do
    local first = redis.call('ZRANGEBYSCORE', P .. 'ready', '-inf', now, 'LIMIT', 0, 1)
    if #first == 0 then break end
    local host = first[1]
    local busy = tonumber(redis.call('HGET', P .. 'busy', host) or '0')
    local room = math.min(wanted, cap(host) - busy)
    local works = room > 0 and redis.call('LPOP', P .. 'q:' .. host, room) or false
    -- Our own processes wrote the work, its URL on the first line;
    -- anything else there is set aside, counted, and no longer pending,
    -- rather than failing this script after the LPOP, which Redis would
    -- not undo.
    local urls, good, bad = {}, {}, {}
    for _, work in ipairs(works or {}) do
      local eol = string.find(work, '\n', 1, true)
      if eol and eol > 1 then
        urls[#urls + 1] = string.sub(work, 1, eol - 1)
        good[#good + 1] = work
      else
        bad[#bad + 1] = work
      end
    end
    if #bad > 0 then
      many('RPUSH', P .. 'unreadable', bad)
      redis.call('DECRBY', P .. 'pending', #bad)
    end
    if #good > 0 then
      local number = redis.call('INCR', P .. 'tokens')
      local token = tostring(number)
      redis.call('HINCRBY', P .. 'busy', host, #good)
      local fields = {}
      for k, url in ipairs(urls) do
        fields[#fields + 1] = url
        fields[#fields + 1] = '1'
        out[#out + 1] = url
        out[#out + 1] = number
        out[#out + 1] = host
        out[#out + 1] = good[k]
      end
      many('HSET', P .. 'grant:' .. token, fields)
      many('RPUSH', P .. 'works:' .. token, good)
      redis.call('HSET', P .. 'grants', token, host)
      redis.call('ZADD', P .. 'leases', now + lease, token)
      wanted = wanted - #good
      -- What `wake` would do, knowing more: the host stays ready (its
      -- delay, which only `complete` moves, is over already) unless its
      -- slots are full or its line empty, at the back of the line.
      -- (LPOP giving fewer than asked says the line is empty.)
      if busy + #good >= cap(host) or #works < room
          or redis.call('LLEN', P .. 'q:' .. host) == 0 then
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
-- The crawl's `see`, for every process at once, for one page's links:
-- the page's URL `from` ('' for the roots), a fingerprint of it `fp`, the
-- links' depth and redirects left, and how many links there are, `n`, in
-- ARGV from `first` on (in a group, `see_group` below, after this header),
-- five per link: the URL; its host; its path if it has a query ('' if
-- not); the reason this process's rules refuse it ('' if they do not); and
-- its flags, '', 'c', 'r', 'cr' or 's': 'c' if it counts in the page's
-- num_urls, 'r' if robots.txt disallows it (as far as this process knows),
-- 's' if it is a sitemap to read (see `sitemap` below). The checks run in
-- the order one process runs them. Returns a code per link (0 seen
-- before, 1 queued, 2 refused, 3 over --max-pages, 4 over
-- --max-query-variants, 5 robots.txt, 6 deeper than --max-depth, for
-- now), and the page's num_urls and num_new_urls (counted as one process
-- counts them: against the seen set and query counts from before the
-- page's links). What it queues and records waits in `gathered` for the
-- script's `flush`.
--
-- The work it queues is four lines: the URL, the page that linked it ('' for
-- a root), its depth and the redirects it may follow. A URL it refuses goes
-- in the report as '-', the reason, and on a second line that page. Neither
-- is JSON: in Lua, encoding and decoding JSON cost more than everything
-- else a URL asks of Redis. The process reads them (`leased_work` in
-- shared.rs, `Frontier::records`).
--
-- `seen` maps each URL to what the first page that offered it was told,
-- and that page's fingerprint: the same page offering the same link again
-- gets the same answer and changes nothing. That happens when a process
-- dies after offering a page's links and before completing the page (on a
-- cluster they are two scripts on two shards), and the page is fetched
-- again.
--
-- With --max-depth (`levels` above), a URL deeper than the level in
-- progress waits in `later`, one deeper than the limit in `deep`; and a
-- URL seen before, now offered at a smaller depth (a redirect's target
-- has its page's depth), moves up, as `DepthLimit::seen_again` does it.
local variants, queued_before = {}, nil
-- A code as `seen` stores it: a string, not a number Lua must format.
local CODES = {[0] = '0', '1', '2', '3', '4', '5', '6'}

-- A work's four lines with another depth.
local function with_depth(work, depth)
  local a = string.find(work, '\n', 1, true)
  local b = a and string.find(work, '\n', a + 1, true)
  local c = b and string.find(work, '\n', b + 1, true)
  if not c then return nil end
  return string.sub(work, 1, b) .. depth .. string.sub(work, c)
end

-- ANCHOR: sitemap
-- With --sitemaps: a sitemap found by any process (the roots' own, one
-- that a robots.txt or an index names) is read once in the whole crawl.
-- It is work like a page, in its host's line and leased, so that a crash
-- does not lose it, under its own key, '~' and its URL: a page may have
-- the same URL. `sitemaps` remembers the sitemaps queued (URL -> '', then
-- what reading it came to), at most as many as one process reads
-- (rules.rs's MAX_SITEMAPS). Its completion offers the pages it lists, as
-- links one step from a root. Returns the link's code: 1 if queued, 0 if
-- not.
local MAX_SITEMAPS = 1000
local function sitemap(url, host)
  if redis.call('HEXISTS', P .. 'sitemaps', url) == 1
      or redis.call('HLEN', P .. 'sitemaps') >= MAX_SITEMAPS then
    return 0
  end
  redis.call('HSET', P .. 'sitemaps', url, '')
  gathered.sitemaps = gathered.sitemaps + 1
  line_up(host, '~' .. url .. '\n\n0\n0')
  return 1
end
-- ANCHOR_END: sitemap

local function see(from, fp, depth, redirects, n, first)
  local last = first - 1 + 5 * n
  if n == 0 then return {}, 0, 0 end
  local max_pages, max_variants = meta('max_pages'), meta('max_query_variants')
  local max_depth, d = meta('max_depth'), tonumber(depth) or 0
  local limited = max_depth >= 0
  -- Query counts, read once per path and script, then kept here.
  local function count(variant)
    if not variants[variant] then
      variants[variant] = tonumber(redis.call('HGET', P .. 'variants', variant) or '0')
    end
    return variants[variant]
  end
  local function full(variant)
    return variant ~= '' and count(variant) >= max_variants
  end
  local function over_max_pages()
    if max_pages < 0 then return false end
    if not queued_before then
      -- Sitemaps are counted in `queued`, not in --max-pages.
      local counts = redis.call('MGET', P .. 'queued', P .. 'sitemaps_queued')
      queued_before = tonumber(counts[1] or '0') - tonumber(counts[2] or '0')
    end
    return queued_before + gathered.queued >= max_pages
  end
  local function skipped(url, reason)
    gathered.report[#gathered.report + 1] = url
    gathered.report[#gathered.report + 1] = '-' .. reason .. '\n' .. from
  end
  local urls = {}
  for j = first, last, 5 do urls[#urls + 1] = ARGV[j] end
  local was = hmget(P .. 'seen', urls)
  -- With --max-depth, where the URLs seen before wait, if they do.
  local was_later, was_deep, later, deep, undeep = {}, {}, {}, {}, {}
  if limited then
    was_later, was_deep = hmget(P .. 'later', urls), hmget(P .. 'deep', urls)
  end
  -- A URL queued, linked first from `first_from`: its path's queries
  -- counted, and in its host's line, or, deeper than the level in
  -- progress, in `later`.
  -- Every string a script makes costs Redis a hash of all its bytes (and
  -- its garbage collection later), so what the page's links share is made
  -- once: the rest of their work, and what `seen` keeps for them.
  local tail = '\n' .. from .. '\n' .. depth .. '\n' .. redirects
  local function queue(url, host, variant, first_from)
    gathered.queued = gathered.queued + 1
    if variant ~= '' then
      redis.call('HINCRBY', P .. 'variants', variant, 1)
      variants[variant] = count(variant) + 1
    end
    local work
    if first_from == from then
      work = url .. tail
    else
      work = url .. '\n' .. first_from .. '\n' .. depth .. '\n' .. redirects
    end
    if limited and d > level() then
      later[#later + 1] = url
      later[#later + 1] = host .. '\n' .. work
    else
      line_up(host, work)
    end
  end
  -- Whether `seen` has each link from this very page (see above).
  local own = {}
  local counted, num_urls, new = {}, 0, 0
  for k = 1, n do
    local j = first + 5 * (k - 1)
    local flags, counts = ARGV[j + 4], false
    own[k] = was[k] and string.sub(was[k], 3) == fp
    if flags == 's' then
      counts = false -- a sitemap: no link of the page's
    elseif own[k] then
      -- This page's own link offered again: counted as it was the first
      -- time (the page's own queries have filled its path's count since).
      counts = string.sub(was[k], 2, 2) == '1'
    else
      counts = (flags == 'c' or flags == 'cr') and not full(ARGV[j + 2])
    end
    if counts then
      num_urls = num_urls + 1
      -- New to the crawl, or this page's own link offered again.
      if not was[k] or own[k] then new = new + 1 end
    end
    counted[k] = counts and '1' or '0'
  end
  -- What `seen` keeps, by code and count: a few different ones a page.
  local kept = {}
  local codes, answered, remember = {}, {}, {}
  for k = 1, n do
    local j = first + 5 * (k - 1)
    local url, host, variant, refused, flags = ARGV[j], ARGV[j + 1], ARGV[j + 2], ARGV[j + 3], ARGV[j + 4]
    local code = 0
    local is_sitemap = flags == 's'
    if is_sitemap then
      -- Not a page, whatever else has its URL: `sitemap` has its own
      -- record of what was queued.
      code = sitemap(url, host)
    elseif answered[url] then
      -- A page that links a URL twice is answered once.
      code = 0
    elseif was[k] then
      if own[k] then
        code = tonumber(string.sub(was[k], 1, 1))
      elseif was_later[k] then
        -- Waiting for a deeper level, and reached by a shorter path.
        local waiting_host, work = first_line(was_later[k])
        local waits_at = work and work_depth(work)
        if waits_at and d < waits_at then
          work = with_depth(work, d)
          if d <= level() then
            redis.call('HDEL', P .. 'later', url)
            line_up(waiting_host, work)
          else
            redis.call('HSET', P .. 'later', url, waiting_host .. '\n' .. work)
          end
        end
      elseif was_deep[k] and d <= max_depth then
        -- Too deep, and now not: it comes back, linked from the page that
        -- found it first, and is queued unless --max-pages is spent.
        undeep[#undeep + 1] = url
        if over_max_pages() then
          local first_from = was_deep[k]
          gathered.report[#gathered.report + 1] = url
          gathered.report[#gathered.report + 1] = '-max-pages\n' .. first_from
          code = 3
        else
          queue(url, host, variant, was_deep[k])
          code = 1
        end
      end
    else
      if refused ~= '' then
        skipped(url, refused)
        code = 2
      elseif full(variant) then
        skipped(url, 'query-variants')
        code = 4
      elseif flags == 'r' or flags == 'cr' then
        skipped(url, 'robots')
        code = 5
      elseif limited and d > max_depth then
        deep[#deep + 1] = url
        deep[#deep + 1] = from
        code = 6
      elseif over_max_pages() then
        skipped(url, 'max-pages')
        code = 3
      else
        queue(url, host, variant, from)
        code = 1
      end
      local key = code * 2 + (counted[k] == '1' and 1 or 0)
      if not kept[key] then kept[key] = CODES[code] .. counted[k] .. fp end
      remember[#remember + 1] = url
      remember[#remember + 1] = kept[key]
    end
    if not is_sitemap then answered[url] = true end
    codes[#codes + 1] = code
  end
  many('HSET', P .. 'seen', remember)
  -- Written at once, not at the flush: the next page in the same script
  -- may reach these URLs by a shorter path.
  many('HSET', P .. 'later', later)
  many('HSET', P .. 'deep', deep)
  many('HDEL', P .. 'deep', undeep)
  return codes, num_urls, new
end

-- `see` of a group in ARGV, header and links, starting at ARGV[i]; and
-- where the next group starts.
local function see_group(i)
  local n = tonumber(ARGV[i + 4]) or 0
  local codes, urls, new = see(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], n, i + 5)
  return codes, urls, new, i + 5 + 5 * n
end
-- ANCHOR_END: see
