# Stage 3: three workers on the joinable queue, the main future in join.
# robots.txt is left out (--ignore-robots) to keep the picture to the queue.
set -euo pipefail
source book/gen/timeline.bash
tiny_site
record target/debug/stage3-crawler "$site" --max-tasks 3 --ignore-robots -q --progress never
draw timeline-stage3 "Stage 3: three workers on a joinable queue, crawling four pages"
