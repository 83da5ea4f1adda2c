# Stage 1 crawling the demo site it starts itself. Pages finish in a
# different order every run, so we keep the first line (the root, which
# always finishes first), the error lines and the pages not searched for
# links, sorted, a count of the rest, and
# the closing line with its time and concurrency replaced by X.X and C.
echo "\$ cargo run -p stage1-callbacks"
cargo run -q -p stage1-callbacks 2>&1 \
  | sed -E -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' \
           -e 's/fetched in [0-9]+\.[0-9]s/fetched in X.Xs/' \
           -e 's/concurrency = [0-9]+/concurrency = C/' \
  | awk '
      NR <= 2 { print; next }
      /^error:|not searched for links/ { print | "LC_ALL=C sort"; next }
      /URLs fetched/ { summary = $0; next }
      { others++ }
      END {
        close("LC_ALL=C sort")
        printf "... %d more URLs, in a different order every run ...\n", others
        print summary
      }'
