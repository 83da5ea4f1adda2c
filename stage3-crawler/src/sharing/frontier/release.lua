-- Gives leased URLs back at once (a process interrupted by Ctrl-C), to
-- the head of their host's line, rather than making the others wait for
-- the leases to run out. ARGV holds pairs of URL and token. Returns how
-- many were given back: none once the crawl is gone (cleared under us),
-- which must not be written to again.
if not crawl_exists() then return 0 end
local now, n = now_ms(), 0
for _, grant in ipairs(by_grant(leases_in_argv())) do
  local host = redis.call('HGET', P .. 'grants', grant.token)
  -- Their works first: the grant may end with them.
  local set = {}
  for _, url in ipairs(grant.urls) do set[url] = true end
  local works = host and works_of(grant.token, set) or {}
  local given = {}
  for k, held in ipairs(let_go(grant.token, grant.urls)) do given[grant.urls[k]] = held end
  local back = {}
  for _, work in ipairs(works) do
    if given[string.sub(work, 1, string.find(work, '\n', 1, true) - 1)] then
      back[#back + 1] = work
    end
  end
  if #back > 0 then
    put_back(host, back, now)
    n = n + #back
  end
end
if n > 0 then redis.call('PUBLISH', P .. 'bell', '') end
return n
