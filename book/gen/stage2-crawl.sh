# Stage 2 crawling its demo site with each fetcher. The order in which pages
# finish changes from run to run, so we keep the first two lines (where the
# demo site is, and the root, which always finishes first), the error lines
# and the pages not searched for links, sorted, a count of the rest, and the closing line with its time and
# concurrency replaced by X.X and C.
set -euo pipefail
for style in state-machine async; do
  echo "\$ cargo run -p stage2-coroutines -- --style $style"
  out=$(cargo run -q -p stage2-coroutines -- --style "$style" 2>&1 \
    | sed -E -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' \
             -e 's/fetched in [0-9]+\.[0-9]s/fetched in X.Xs/' \
             -e 's/concurrency = [0-9]+/concurrency = C/')
  head -n 2 <<<"$out"
  tail -n +3 <<<"$out" | grep -e '^error:' -e 'not searched for links' | LC_ALL=C sort
  others=$(tail -n +3 <<<"$out" | grep -cv -e '^error:' -e 'not searched for links' -e 'URLs fetched in')
  echo "... $others more URLs, in a different order every run ..."
  tail -n 1 <<<"$out"
done
