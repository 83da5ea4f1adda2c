-- Extends the leases this process still holds: ARGV holds pairs of URL
-- and token. A lease that ran out and went to someone else is not ours
-- to extend. A grant's URLs are renewed together (`grants`). Returns 1
-- for each lease extended, 0 for each not ours.
if not crawl_exists() then return {} end
local now, lease = now_ms(), meta('lease')
local by_token, tokens = {}, {}
for i = 1, #ARGV, 2 do
  local token = ARGV[i + 1]
  if not by_token[token] then
    by_token[token] = {}
    tokens[#tokens + 1] = token
  end
  table.insert(by_token[token], i)
end
local out = {}
for _, token in ipairs(tokens) do
  local is, urls = by_token[token], {}
  for n, i in ipairs(is) do urls[n] = ARGV[i] end
  local held, any = hmget(P .. 'grant:' .. token, urls), false
  for n, i in ipairs(is) do
    out[(i + 1) / 2] = held[n] and 1 or 0
    any = any or held[n]
  end
  if any then redis.call('ZADD', P .. 'leases', 'XX', now + lease, token) end
end
return out
