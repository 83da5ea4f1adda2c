#!/usr/bin/env bash
# Runs snake-load at 1,000 and 2,000 players (release build) and writes what
# it measured as a table, book/src/generated/snake-load.md, which the Game
# Server chapter includes, and into examples/snake/README.md between its
# load-table markers. A measurement, not a
# listing: book/regenerate does not compare it, since no two runs agree to
# the millisecond; run this again after a change to the server and commit
# the table with it.
#
#   examples/snake/load-table.sh [SECONDS]     (default 30 a run)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-30}
cargo build --release --quiet -p snake
out=book/src/generated/snake-load.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for players in 1000 2000; do
  target/release/snake-load --players "$players" --seconds "$seconds" >"$tmp/$players" 2>&1 ||
    { cat "$tmp/$players" >&2; echo "snake-load failed at $players players" >&2; exit 1; }
done
# "label:   value" lines of each run, side by side.
field() { sed -nE "s/^$2: +//p" "$tmp/$1"; }
cpu=$(sed -nE 's/^model name\s*: //p;' /proc/cpuinfo | head -1)
{
  echo "Measured by \`examples/snake/load-table.sh\` on commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- examples/snake runtime || echo ' (with changes)'), $(nproc) cores ($cpu), ${seconds} s a run; the bots share the cores with the server."
  echo
  echo "| \`snake-load --players\` | 1000 | 2000 |"
  echo "|---|---|---|"
  for label in "tick rate" "tick interval" "tick cost" "server CPU per tick" "frame" "server memory" "bots"; do
    a=$(field 1000 "$label" | sed -E 's/ \((everything|the game|its view)[^)]*\)//')
    b=$(field 2000 "$label" | sed -E 's/ \((everything|the game|its view)[^)]*\)//')
    echo "| $label | $a | $b |"
  done
} >"$out"
cat "$out"
python3 - "$out" examples/snake/README.md <<'PY'
import re, sys
table, readme = (open(p, encoding="utf-8").read() for p in sys.argv[1:])
begin, end = "<!-- load-table: begin -->\n", "<!-- load-table: end -->"
head, rest = readme.split(begin)
_, tail = rest.split(end)
open(sys.argv[2], "w", encoding="utf-8").write(head + begin + table + end + tail)
PY
