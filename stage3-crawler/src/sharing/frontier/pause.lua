-- A host asked a process to slow down (a 429 or 503): ARGV[1] is the
-- host, ARGV[2] the wait in milliseconds. No process is handed the host's
-- URLs before it is over; a later start the host has already stays.
if not crawl_exists() then return 0 end
local host, now = ARGV[1], now_ms()
local until_ms = now + (tonumber(ARGV[2]) or 0)
local was = tonumber(redis.call('HGET', P .. 'next', host) or '0')
if until_ms > was then redis.call('HSET', P .. 'next', host, until_ms) end
wake(host, now)
return 1
