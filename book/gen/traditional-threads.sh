# thread-per-fetch crawling the demo site, then measuring what 1000 idle
# threads cost this machine. Pages finish in a different order every run,
# so the crawl shows the root, the sorted error lines and the closing line
# (time and thread count replaced by X.X and T). The measurement is rounded
# to whole KiB by the program.
echo "\$ cargo run -p thread-per-fetch"
target/debug/thread-per-fetch 2>&1 \
  | sed -E -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' \
           -e 's/fetched in [0-9]+\.[0-9]s/fetched in X.Xs/' \
           -e 's/, [0-9]+ threads at most/, T threads at most/' \
  | awk '
      NR <= 2 { print; next }
      /^error:/ { print | "LC_ALL=C sort"; next }
      /URLs fetched/ { summary = $0; next }
      { others++ }
      END {
        close("LC_ALL=C sort")
        printf "... %d more URLs, in a different order every run ...\n", others
        print summary
      }'
echo
echo "\$ cargo run -p thread-per-fetch -- --measure 1000"
# Resident memory per thread moves by a KiB from run to run (10 or 11 on
# the machine that builds the book), so it is shown to the nearest 10 KiB.
target/debug/thread-per-fetch --measure 1000 \
  | awk '/memory in use \(resident\)/ {
           n = $(NF-1); r = int((n + 5) / 10) * 10
           sub(/ [0-9]+ KiB$/, sprintf("~%d KiB", r)); print; next }
         { print }'
