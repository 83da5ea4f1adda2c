# HTTP/2 against a real server: nginx (Debian's package) serving a small
# site over TLS, with h2 offered by ALPN. The same crawl twice, with
# --http2 auto (the default) and --http2 never; for each, the protocols the
# report names, the connections the crawler opened, and what nginx's own
# access log says carried each request. Counts only, so the output is the
# same every run (HTTP/1.1's connection count depends on timing, and is
# not shown).
set -euo pipefail
dir=$(mktemp -d)
# nginx's worker runs as nobody when started by root: let it read the site.
chmod 755 "$dir"
trap '[ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT

# The site: an index and 30 pages in a binary tree.
mkdir -p "$dir/site/p"
page() { printf '<!doctype html><title>%s</title>\n' "$1"; shift; for href; do printf '<a href="%s">%s</a>\n' "$href" "$href"; done; }
page index p/0.html p/1.html >"$dir/site/index.html"
for i in $(seq 0 29); do
  links=()
  for j in $((2 * i + 2)) $((2 * i + 3)); do [ "$j" -lt 30 ] && links+=("$j.html"); done
  page "$i" "${links[@]}" >"$dir/site/p/$i.html"
done

# A certificate for 127.0.0.1, and nginx on two free ports: https with h2,
# and plain http for the request that flushes the log (see below).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
  -addext basicConstraints=critical,CA:FALSE \
  -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
plain=$(free_port)
cat >"$dir/nginx.conf" <<CONF
daemon on;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events {}
http {
    include /etc/nginx/mime.types;
    log_format crawl '\$server_protocol \$connection';
    access_log $dir/access.log crawl;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    server {
        listen 127.0.0.1:$port ssl http2;
        listen 127.0.0.1:$plain;
        ssl_certificate $dir/cert.pem;
        ssl_certificate_key $dir/key.pem;
        root $dir/site;
        location = /flush { access_log off; return 204; }
    }
}
CONF
/usr/sbin/nginx -p "$dir" -c "$dir/nginx.conf"

crawl() {
  echo "\$ stage3-crawler https://127.0.0.1:PORT/ --ca-file cert.pem --report json -q${*:+ $*}"
  : >"$dir/access.log"
  target/debug/stage3-crawler "https://127.0.0.1:$port/" --ca-file "$dir/cert.pem" \
    --report json -q --progress never "$@" >"$dir/out"
  # One worker logs each request in the turn of its loop that sent the
  # answer; a request sent after the crawl is answered after every line
  # is written.
  curl -s "http://127.0.0.1:$plain/flush" >/dev/null
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
