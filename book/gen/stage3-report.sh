# The finished crawler on the demo site it starts itself, with 10 workers.
# The report is sorted by URL, so from run to run only the port, the timings
# and the date change; they become PORT, X.XXX, Y.YYY and DATE. So does how
# many of a page's links were new (NEW in NEW/ALL), which depends on which
# worker got where first: it becomes *. The hundred numbered pages are folded
# into one line after the first two.
echo '$ cargo run -p stage3-crawler -- --max-tasks 10 -q'
target/debug/stage3-crawler --max-tasks 10 -q --progress never 2>&1 \
  | sed -E -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' \
           -e 's/in [0-9]+\.[0-9]+ secs/in X.XXX secs/' \
           -e 's/\([0-9]+\.[0-9]+ urls\/sec\/task\)/(Y.YYY urls\/sec\/task)/' \
           -e 's/^Date: .*/Date: DATE/' \
           -e 's# [0-9]+/([0-9]+)$# */\1#' \
  | awk '
      /\/pages\/[abc]\/[0-9]+\.html / {
        if (++pages <= 2) print
        else if (pages == 3) print "... (the other numbered pages, one line each)"
        next
      }
      { print }'
