#!/usr/bin/env bash
# HTTP/2 against HTTP/1.1, on a real server: nginx (Debian's package, which
# .ci/test installs) serving a generated site of PAGES pages over TLS, h2
# offered by ALPN. Three ways to fetch it, alternating round by round:
#
#   h2     stage 3, --http2 auto (the default): one connection, streams on it
#   h1     stage 3, --http2 never: up to --per-host keep-alive connections
#   floor  curl --http2 --parallel, given every URL in advance, 8 streams at
#          a time on one connection: the fetching alone, no parsing, no
#          discovering; what no crawler can beat
#
#   examples/bench/http2.sh [--pages N] [--rounds N] [--out FILE]
#
# It prints (and with --out, writes as Markdown for the book) the medians of wall time and CPU time (user + system, the
# process and its children), CPU per URL, the connections nginx saw, and
# the ratios h2 / h1 (targets: wall <= 1.0, CPU per URL <= 1.2) and
# h2 / floor. Build stage 3 first (cargo build --release -p stage3-crawler).
# The book's table: --out book/src/generated/performance-http2.md
set -euo pipefail
cd "$(dirname "$0")/../.."
# Every server here is on 127.0.0.1: a proxy from the environment, which
# the crawler honours as curl does, must not carry these requests.
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
pages=10000
rounds=5
out=
while [ $# -gt 0 ]; do
  case "$1" in
    --pages) pages=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) sed -n '2,18p' "$0"; exit 2 ;;
  esac
done
crawler=target/release/stage3-crawler
[ -x "$crawler" ] || { echo "build it first: cargo build --release -p stage3-crawler" >&2; exit 1; }

dir=$(mktemp -d)
chmod 755 "$dir"
trap '[ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT

# The site: the docs-site shape, pages of about 8 KB with 20 links each
# (a tree, so that the crawl goes level by level, and the rest back into
# it), gzipped by nginx as it would be.
python3 - "$dir/site" "$pages" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.join(root, "p"))
text = "<p>" + "The event loop wakes the task that each socket belongs to. " * 120 + "</p>\n"
def write(path, links):
    with open(path, "w") as f:
        f.write("<!doctype html><title>p</title>\n" + text)
        f.writelines(f'<a href="/p/{j}.html">{j}</a>\n' for j in links)
write(os.path.join(root, "index.html"), range(min(n, 10)))
for i in range(n):
    children = [c for c in range(10 * i + 10, 10 * i + 20) if c < n]
    write(os.path.join(root, "p", f"{i}.html"), children + [(i * 7 + k) % n for k in range(20 - len(children))])
PY

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
  -addext basicConstraints=critical,CA:FALSE \
  -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$dir/nginx.conf" <<CONF
daemon on;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events {}
http {
    include /etc/nginx/mime.types;
    log_format c '\$connection';
    access_log $dir/access.log c;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    gzip on;
    keepalive_requests 100000;
    server {
        listen 127.0.0.1:$port ssl http2;
        ssl_certificate $dir/cert.pem;
        ssl_certificate_key $dir/key.pem;
        root $dir/site;
    }
}
CONF
/usr/sbin/nginx -p "$dir" -c "$dir/nginx.conf"
base="https://127.0.0.1:$port"
{ echo "$base/"; for i in $(seq 0 $((pages - 1))); do echo "$base/p/$i.html"; done; } >"$dir/urls"
sed 's/^/url = /' "$dir/urls" >"$dir/curl.cfg"

# One run: wall and CPU seconds (the child and its children, from
# getrusage), and the connections nginx saw.
measure() {
  : >"$dir/access.log"
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
wall = time.monotonic() - start
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{wall:.4f} {r.ru_utime + r.ru_stime:.4f}", end=" ")
PY
  sort -u "$dir/access.log" | wc -l
}
run() {
  case "$1" in
    h2) measure "$crawler" "$base/" --ca-file "$dir/cert.pem" --report json -q --progress never ;;
    h1) measure "$crawler" "$base/" --ca-file "$dir/cert.pem" --report json -q --progress never --http2 never ;;
    floor) measure curl -s --http2 --compressed --parallel --parallel-max 8 --cacert "$dir/cert.pem" -K "$dir/curl.cfg" -o /dev/null ;;
  esac
}
for round in $(seq 1 "$rounds"); do
  for way in h2 h1 floor; do echo "$way $(run "$way")"; done
done >"$dir/results"

python3 - "$dir/results" "$pages" "$(nproc)" <<'PY' | tee "${out:-/dev/null}"
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    way, wall, cpu, conns = line.split()
    rows.setdefault(way, []).append((float(wall), float(cpu), int(conns)))
urls = int(sys.argv[2]) + 1
med = {w: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v), max(r[2] for r in v)) for w, v in rows.items()}
print(f"HTTP/2 against HTTP/1.1: nginx over TLS (one worker), {urls} URLs, {len(rows['h2'])} rounds, medians, {sys.argv[3]} cores")
print()
print(f"| run | wall (s) | CPU (s) | CPU per URL (µs) | connections |")
print(f"|---|---|---|---|---|")
for way, name in [("h2", "stage 3, --http2 auto"), ("h1", "stage 3, --http2 never"), ("floor", "curl --http2 --parallel (the floor)")]:
    wall, cpu, conns = med[way]
    print(f"| {name} | {wall:.3f} | {cpu:.3f} | {cpu / urls * 1e6:.0f} | {conns} |")
h2, h1, floor = med["h2"], med["h1"], med["floor"]
print()
print(f"h2 / h1: wall {h2[0] / h1[0]:.2f} (target <= 1.0), CPU per URL {h2[1] / h1[1]:.2f} (target <= 1.2)")
print()
print(f"h2 / floor: wall {h2[0] / floor[0]:.2f}, CPU {h2[1] / floor[1]:.2f}")
PY
