# Stage 1 against servers that misbehave: the demo site's fault paths, a
# port where nothing listens, and a server that never answers (with a short
# timeout). Each fetch fails with one error line, and the crawl ends.
set -euo pipefail
out=$(mktemp)
coproc SITE { exec target/debug/demo-site 2>/dev/null; }
trap 'kill "$SITE_PID"; rm -f "$out"' EXIT
read -r site <&"${SITE[0]}"
run() {
  echo "\$ cargo run -p stage1-callbacks -- $*" | sed -E 's/127\.0\.0\.1:[0-9]{2,}/127.0.0.1:PORT/g'
  status=0
  target/debug/stage1-callbacks "$@" >"$out" 2>&1 || status=$?
  sed -E -e 's/127\.0\.0\.1:[0-9]{2,}/127.0.0.1:PORT/g' \
         -e 's/fetched in [0-9]+\.[0-9]s/fetched in X.Xs/' <"$out"
  echo "(exit status $status)"
}
run "${site}fault/garbage"
run "${site}fault/short-body"
run "${site}fault/drop"
run "${site}fault/hang" --timeout 1
run "http://127.0.0.1:1/"
