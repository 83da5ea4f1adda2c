# "One connection, eight streams": stage 3 with --http2-prior-knowledge
# against nginx speaking HTTP/2 without TLS (h2c, so that no handshake
# crowds the picture): the root, then its eight links fetched as eight
# streams on the one connection, whose task wakes each worker as its
# frames arrive. robots.txt is left out (--ignore-robots).
set -euo pipefail
source book/gen/timeline.bash
source book/gen/nginx.bash
trap 'stop_nginx; cleanup_timeline' EXIT
# nginx's worker (nobody, when started by root) must reach the site.
chmod 755 "$timeline_dir"
mkdir -p "$timeline_dir/nginx/site"
{
  for i in 1 2 3 4 5 6 7 8; do printf '<a href="p%s.html">p%s</a>\n' "$i" "$i"; done
} >"$timeline_dir/nginx/site/index.html"
for i in 1 2 3 4 5 6 7 8; do printf '<p>page %s</p>\n' "$i" >"$timeline_dir/nginx/site/p$i.html"; done
start_nginx "$timeline_dir/nginx" "$timeline_dir/nginx/site"
record target/debug/stage3-crawler "$h2c/" --http2-prior-knowledge --max-tasks 8 --ignore-robots --parse-threads 0 \
  -q --progress never
draw timeline-http2 "HTTP/2: the root, then eight streams on one connection, each worker woken by its task"
