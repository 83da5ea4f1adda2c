# blocking-fetch crawling the demo site one page at a time. The order is the
# same every run (breadth-first, in document order), so we show the first
# lines as they come, then how many more there were and which of them were
# errors, then the closing line with its time replaced by X.X.
echo "\$ cargo run -p blocking-fetch"
target/debug/blocking-fetch 2>&1 \
  | sed -E -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' \
           -e 's/fetched in [0-9]+\.[0-9]s/fetched in X.Xs/' \
  | awk '
      NR <= 7 { print; next }
      /URLs fetched/ { summary = $0; next }
      { others++; if (/^error:/) errors[++e] = $0 }
      END {
        printf "... and %d more lines, among them:\n", others
        for (i = 1; i <= e; i++) print errors[i]
        print summary
      }'
