-- Extends the leases this process still holds: ARGV holds pairs of URL
-- and token. A lease that ran out and went to someone else is not ours
-- to extend. A grant's URLs are renewed together (`grants`). Returns 1
-- for each lease extended, 0 for each not ours.
if not crawl_exists() then return {} end
local now, lease, out = now_ms(), meta('lease'), {}
for _, grant in ipairs(by_grant(leases_in_argv())) do
  local held, any = hmget(P .. 'grant:' .. grant.token, grant.urls), false
  for n, k in ipairs(grant.at) do
    out[k] = held[n] and 1 or 0
    any = any or held[n]
  end
  if any then redis.call('ZADD', P .. 'leases', 'XX', now + lease, grant.token) end
end
return out
