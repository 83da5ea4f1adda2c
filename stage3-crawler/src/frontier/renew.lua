-- Extends the leases this process still holds: ARGV holds pairs of URL
-- and token. A lease that ran out and went to someone else is not ours
-- to extend. Returns how many were extended.
local now, lease, n = now_ms(), meta('lease'), 0
for i = 1, #ARGV, 2 do
  local held = redis.call('HGET', P .. 'held', ARGV[i])
  if held and held_parts(held) == ARGV[i + 1] then
    redis.call('ZADD', P .. 'leases', 'XX', now + lease, ARGV[i])
    n = n + 1
  end
end
return n
