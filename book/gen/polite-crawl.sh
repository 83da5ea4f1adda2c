# Stage 3 on the demo site's polite mode, with sitemaps and a short leash on
# the calendar trap: the end of the text report, from the skipped URLs on.
# Page lines are left out but for the /polite/ ones (the rest are those of
# stage3-report.sh), and so are the off-host links of the numbered pages:
# what is shown is what politeness adds. One worker keeps the order, and
# so the "from" of each skipped URL, fixed. Ports, timings and dates are
# replaced as in stage3-report.sh.
set -euo pipefail
dir=$(mktemp -d)
target/debug/demo-site --polite --port 0 >"$dir/url" 2>/dev/null &
site_pid=$!
trap 'kill "$site_pid" 2>/dev/null; rm -rf "$dir"' EXIT
until [ -s "$dir/url" ]; do sleep 0.05; done
base=$(head -n 1 "$dir/url")
echo '$ demo-site --polite &'
echo '$ stage3-crawler http://127.0.0.1:PORT/ --sitemaps --max-query-variants 3 --max-tasks 1 -v'
target/debug/stage3-crawler "$base" --sitemaps --max-query-variants 3 --max-tasks 1 -v \
    --progress never \
    2>/dev/null \
  | sed -E -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' \
           -e 's/in [0-9]+\.[0-9]+ secs/in X.XXX secs/' \
           -e 's/\([0-9]+\.[0-9]+ urls\/sec\/task\)/(Y.YYY urls\/sec\/task)/' \
           -e 's/^Date: .*/Date: DATE/' \
  | awk '/^  http:\/\/example\.com\/pages\// { next }
         /^Skipped/ { show = 1 }
         show || /\/polite\// { print }'
