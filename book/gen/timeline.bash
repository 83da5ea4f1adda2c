# Shared by the timeline-*.sh listings (sourced, not a listing itself): run a
# program with the runtime's recorder on, then print the run's story (the
# listing, which `book/regenerate --check` compares) and draw its SVG into
# $BOOK_FIGURES (book/src/figures, or a scratch directory when checking).
# The story is told in logical time, so it is the same on every run; the
# SVG shows this run's real times, so it is redrawn, not compared.

: "${BOOK_FIGURES:=book/src/figures}"
timeline_dir=$(mktemp -d)
site_pid=
cleanup_timeline() {
  if [ -n "$site_pid" ]; then kill "$site_pid" 2>/dev/null || true; fi
  rm -rf "$timeline_dir"
}
trap cleanup_timeline EXIT

# Starts a four-page site (/ links to /a.html, /b.html and /c.html, which
# link nowhere) on a free port, served by Python's http.server with one
# response per connection; sets $site to its URL. Each response waits 50 ms
# first: a server that answers at once may have answered before the crawler
# reads, on a busy machine, and then no fetch waits for the network and the
# story changes. A slow server makes every fetch wait, as on the real web.
tiny_site() {
  local root="$timeline_dir/site"
  mkdir -p "$root"
  printf '<a href="a.html">a</a> <a href="b.html">b</a> <a href="c.html">c</a>\n' >"$root/index.html"
  for page in a b c; do printf '<p>page %s</p>\n' "$page" >"$root/$page.html"; done
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  python3 - "$port" "$root" >/dev/null 2>&1 <<'EOF' &
import functools, http.server, sys, time

class Slow(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        time.sleep(0.05)
        super().do_GET()

handler = functools.partial(Slow, directory=sys.argv[2])
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), handler).serve_forever()
EOF
  site_pid=$!
  local tries=0
  until python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2>/dev/null; do
    tries=$((tries + 1))
    if [ "$tries" -gt 600 ]; then echo "the tiny site did not start" >&2; return 1; fi
    sleep 0.05
  done
  site="http://127.0.0.1:$port/"
}

# record COMMAND...: runs COMMAND with RUNTIME_TRACE set, output discarded.
record() {
  # A slow poll depends on the machine: its lint is tested on a paused
  # clock, and kept out of the stories.
  RUNTIME_TRACE="$timeline_dir/trace.json" RUNTIME_SLOW_POLL_MS=3600000 RUST_LOG=off \
    "$@" >/dev/null 2>&1
}

# draw NAME TITLE [--sockets]: prints the story of the last recording and
# draws it as $BOOK_FIGURES/NAME.svg.
draw() {
  local name=$1 title=$2
  shift 2
  target/debug/timeline "$timeline_dir/trace.json" --story "$@" \
    --svg "$BOOK_FIGURES/$name.svg" --title "$title"
}
