# "Two loops exchanging a link": runtime/examples/two_loops.rs, the main
# thread's loop and one loop of `Loops`, each recording its own trace
# (trace.json and trace.loop-0.json), drawn as one timeline.
set -euo pipefail
source book/gen/timeline.bash
record target/debug/examples/two_loops
target/debug/timeline "$timeline_dir/trace.json" "$timeline_dir/trace.loop-0.json" --story \
  --svg "$BOOK_FIGURES/timeline-loops.svg" \
  --title "Two loops: the main thread's sends a link to loop-0's owner, which answers"
