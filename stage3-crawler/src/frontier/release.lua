-- Gives leased URLs back at once (a process interrupted by Ctrl-C), to
-- the head of their host's line, rather than making the others wait for
-- the leases to run out. ARGV holds pairs of URL and token.
local now, n = now_ms(), 0
for i = 1, #ARGV, 2 do
  local held = redis.call('HGET', P .. 'held', ARGV[i])
  local holder, host, work
  if held then holder, host, work = held_parts(held) end
  if holder then
    if holder == ARGV[i + 1] then
      redis.call('ZREM', P .. 'leases', ARGV[i])
      redis.call('HDEL', P .. 'held', ARGV[i])
      redis.call('LPUSH', P .. 'q:' .. host, work)
      redis.call('HINCRBY', P .. 'busy', host, -1)
      wake(host, now)
      n = n + 1
    end
  end
end
if n > 0 then redis.call('PUBLISH', P .. 'bell', '') end
return n
