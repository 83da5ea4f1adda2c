# HTTP/2 against a real server: nginx (Debian's package) serving a small
# site over TLS, with h2 offered by ALPN. The same crawl twice, with
# --http2 auto (the default) and --http2 never; for each, the protocols the
# report names, the connections the crawler opened, and what nginx's own
# access log says carried each request. Counts only, so the output is the
# same every run (HTTP/1.1's connection count depends on timing, and is
# not shown).
set -euo pipefail
source book/gen/nginx.bash
dir=$(mktemp -d)
trap 'stop_nginx; rm -rf "$dir"' EXIT

# The site: an index and 30 pages in a binary tree.
mkdir -p "$dir/site/p"
page() { printf '<!doctype html><title>%s</title>\n' "$1"; shift; for href; do printf '<a href="%s">%s</a>\n' "$href" "$href"; done; }
page index p/0.html p/1.html >"$dir/site/index.html"
for i in $(seq 0 29); do
  links=()
  for j in $((2 * i + 2)) $((2 * i + 3)); do [ "$j" -lt 30 ] && links+=("$j.html"); done
  page "$i" "${links[@]}" >"$dir/site/p/$i.html"
done
start_nginx "$dir" "$dir/site"

crawl() {
  echo "\$ stage3-crawler https://127.0.0.1:PORT/ --ca-file cert.pem --report json -q${*:+ $*}"
  : >"$dir/access.log"
  target/debug/stage3-crawler "$https/" --ca-file "$cert" \
    --report json -q --progress never "$@" >"$dir/out"
  flush_nginx_log
  local urls protocols connections requests carried
  urls=$(grep -c '"exception"' "$dir/out")
  protocols=$(grep -o '"protocol":"[^"]*"' "$dir/out" | sort -u | cut -d'"' -f4 | paste -sd,)
  connections=$(grep -o '"connections":[0-9]*' "$dir/out" | cut -d: -f2)
  requests=$(wc -l <"$dir/access.log")
  carried=$(cut -d' ' -f1 "$dir/access.log" | sort -u | paste -sd,)
  echo "report: $urls URLs, each fetched over $protocols"
  if [ "$protocols" = h2 ]; then
    echo "        $connections connection opened"
    echo "nginx:  $requests requests (robots.txt too), all $carried, on $(cut -d' ' -f2 "$dir/access.log" | sort -u | wc -l) connection"
  else
    echo "nginx:  $requests requests (robots.txt too), all $carried"
  fi
}
crawl
echo
crawl --http2 never
