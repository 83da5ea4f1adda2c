# Stage 2: a task per URL, three fetches in flight after the first page.
set -euo pipefail
source book/gen/timeline.bash
tiny_site
record target/debug/stage2-coroutines "$site"
draw timeline-stage2 "Stage 2: a task per URL, crawling four pages"
