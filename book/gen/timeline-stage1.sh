# Stage 1's callbacks on the loop: a crawl of a four-page site.
set -euo pipefail
source book/gen/timeline.bash
tiny_site
record target/debug/stage1-callbacks "$site"
draw timeline-stage1 "Stage 1: callbacks on the event loop, crawling four pages" --sockets
