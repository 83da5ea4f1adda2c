# Redirects against the demo site, logs (stderr) then report (stdout): a
# chain cut short by --max-redirect, and three redirects that end at one
# page, which is fetched once. One worker keeps the order of the log lines
# fixed. Ports, timings and dates are replaced as in stage3-report.sh.
set -euo pipefail
site_out=$(mktemp)
target/debug/demo-site --port 0 >"$site_out" 2>/dev/null &
site_pid=$!
trap 'kill "$site_pid" 2>/dev/null; rm -f "$site_out"' EXIT
until [ -s "$site_out" ]; do sleep 0.05; done
base=$(head -n 1 "$site_out")
base=${base%/}

normalise() {
  sed -E -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' \
         -e 's/in [0-9]+\.[0-9]+ secs/in X.XXX secs/' \
         -e 's/\([0-9]+\.[0-9]+ urls\/sec\/task\)/(Y.YYY urls\/sec\/task)/' \
         -e 's/^Date: .*/Date: DATE/'
}

crawl() {
  echo "\$ stage3-crawler $* --exclude '/\$|/static/' --max-tasks 1" | normalise
  target/debug/stage3-crawler "$@" --exclude '/$|/static/' --max-tasks 1 --progress never \
    2>"$site_out.err" >"$site_out.out" || true
  normalise <"$site_out.err"
  normalise <"$site_out.out"
  rm -f "$site_out.err" "$site_out.out"
  echo
}

crawl "$base/redirect/chain/1" --max-redirect 2
crawl "$base/redirect/alias" "$base/redirect/chain/5" "$base/redirect/fragment"
