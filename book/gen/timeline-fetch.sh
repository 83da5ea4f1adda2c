# "Watching a fetch": stage 2's trace_fetch example, one server task and
# one fetching task on one runtime.
set -euo pipefail
source book/gen/timeline.bash
record target/debug/examples/trace_fetch state-machine
draw timeline-fetch "Watching a fetch: task 1 serves one page, task 2 fetches it"
