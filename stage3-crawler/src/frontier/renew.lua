-- Extends the leases this process still holds: ARGV holds pairs of URL
-- and token. A lease that ran out and went to someone else is not ours
-- to extend. Returns 1 for each lease extended, 0 for each not ours.
if not crawl_exists() then return {} end
local now, lease, out = now_ms(), meta('lease'), {}
for i = 1, #ARGV, 2 do
  local held = redis.call('HGET', P .. 'held', ARGV[i])
  if held and held_parts(held) == ARGV[i + 1] then
    redis.call('ZADD', P .. 'leases', 'XX', now + lease, ARGV[i])
    table.insert(out, 1)
  else
    table.insert(out, 0)
  end
end
return out
