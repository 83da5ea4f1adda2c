-- Gives leased URLs back at once (a process interrupted by Ctrl-C), to
-- the head of their host's line, rather than making the others wait for
-- the leases to run out. ARGV holds pairs of URL and token. Returns how
-- many were given back.
local now, n, by_token, tokens = now_ms(), 0, {}, {}
for i = 1, #ARGV, 2 do
  local token = ARGV[i + 1]
  if not by_token[token] then
    by_token[token] = {}
    tokens[#tokens + 1] = token
  end
  table.insert(by_token[token], ARGV[i])
end
for _, token in ipairs(tokens) do
  local urls = by_token[token]
  local host = redis.call('HGET', P .. 'grants', token)
  -- Their works first: the grant may end with them.
  local set = {}
  for _, url in ipairs(urls) do set[url] = true end
  local works = host and works_of(token, set) or {}
  local held, back = let_go(token, urls), {}
  local given = {}
  for k, url in ipairs(urls) do given[url] = held[k] end
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
