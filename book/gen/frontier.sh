# Three crawler processes share one crawl of the demo site through a real
# redis-server (--frontier): the first creates it with the roots, two join
# it without. Shown: the three reports together, the crawl's keys in Redis
# when it is over, the identity every joiner reads, the merged report's
# end, and a joiner refused for an option that differs. Ports become PORT;
# the merged report's times become T.
set -euo pipefail
root=$PWD
bin="$root/target/debug/stage3-crawler"
dir=$(mktemp -d)
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no \
  >/dev/null 2>&1 &
redis=$!
"$root/target/debug/demo-site" --delay-ms 5 --port 0 >"$dir/url" 2>/dev/null &
site=$!
trap 'kill "$site" "$redis" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
until [ -s "$dir/url" ] && redis-cli -p "$redis_port" ping >/dev/null 2>&1; do sleep 0.05; done
base=$(head -n 1 "$dir/url")
port=${base##*:}
port=${port%/}
frontier="redis://127.0.0.1:$redis_port/demo"
cd "$dir"
normalise() {
  sed -E -e "s/127\.0\.0\.1:$port/127.0.0.1:PORT/g" \
         -e "s/127\.0\.0\.1:$redis_port/127.0.0.1:PORT/g" \
         -e 's/^Finished ([0-9]+) urls in [0-9.]+ secs \(max_tasks=([0-9]+)\) \([0-9.]+ urls/Finished \1 urls in T secs (max_tasks=\2) (T urls/' \
         -e 's/^Date: .*/Date: DATE/'
}
{
echo "\$ redis-server --port PORT &"
echo "\$ stage3-crawler http://127.0.0.1:PORT/ --max-query-variants 3 --max-tasks 3 --frontier $frontier > a.txt &"
"$bin" "$base" --max-query-variants 3 --max-tasks 3 --frontier "$frontier" >a.txt 2>/dev/null &
a=$!
echo "\$ stage3-crawler --frontier $frontier --max-tasks 3 > b.txt &"
"$bin" --frontier "$frontier" --max-tasks 3 >b.txt 2>/dev/null &
b=$!
echo "\$ stage3-crawler --frontier $frontier --max-tasks 3 > c.txt &"
"$bin" --frontier "$frontier" --max-tasks 3 >c.txt 2>/dev/null &
c=$!
echo "\$ wait"
wait "$a" "$b" "$c"
echo "\$ cat a.txt b.txt c.txt | grep -c '^http'       # URLs fetched, in the three reports"
cat a.txt b.txt c.txt | grep -c '^http'
echo "\$ redis-cli -p PORT --scan --pattern 'stage3:{demo}:*' | sort"
redis-cli -p "$redis_port" --scan --pattern 'stage3:{demo}:*' | sort
echo "\$ redis-cli -p PORT hget 'stage3:{demo}:meta' identity | python3 -m json.tool"
redis-cli -p "$redis_port" hget 'stage3:{demo}:meta' identity | python3 -m json.tool
echo "\$ stage3-crawler --frontier $frontier --report-only | tail -n 16"
"$bin" --frontier "$frontier" --report-only | tail -n 16
echo "\$ stage3-crawler --frontier $frontier --per-host 2"
"$bin" --frontier "$frontier" --per-host 2 2>&1 || echo "(exit status $?)"
} | normalise
