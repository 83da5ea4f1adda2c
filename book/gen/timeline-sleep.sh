# The smallest timeline: runtime/examples/trace.rs, one task that sleeps
# for 10 ms, awaited by the main future.
set -euo pipefail
source book/gen/timeline.bash
record target/debug/examples/trace
draw timeline-sleep "One task sleeps for 10 ms (runtime/examples/trace.rs)"
