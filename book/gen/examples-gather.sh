# `gather`: two tasks that sleep 1 s and 2 s at the same time. The total
# varies by a few milliseconds from run to run, so it becomes X.XXs.
target/debug/gather \
  | sed -E 's/^total: [0-9]+(\.[0-9]+)?(ns|µs|ms|s) /total: X.XXs /'
