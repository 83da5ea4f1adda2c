# Stage 2 against the demo site's fault paths, one crawl each: a server that
# never answers (with --timeout 0.5), and four that answer badly. The site
# runs as its own process; its port becomes PORT, and the time X.X.
set -euo pipefail
cargo build -q -p demo-site -p stage2-coroutines
coproc SITE { exec target/debug/demo-site --port 0 2>/dev/null; }
trap 'kill "$SITE_PID" 2>/dev/null || true' EXIT
read -r base <&"${SITE[0]}"
for path in fault/hang fault/drop fault/garbage fault/short-body fault/close-mid-body; do
  args=("$base$path")
  [ "$path" = fault/hang ] && args=(--timeout 0.5 "$base$path")
  echo "\$ stage2-coroutines ${args[*]}"
  status=0
  target/debug/stage2-coroutines "${args[@]}" 2>&1 || status=$?
  echo "(exit code $status)"
done | sed -E -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' \
              -e 's/fetched in [0-9]+\.[0-9]s/fetched in X.Xs/'
