# The snake server with two players (Python's websockets library, from
# .ci/venv), recorded from its start to its Ctrl-C: the game loop woken by
# its timer, each connection woken by its socket and by the game loop's
# broadcast, and the main future accepting, then closing down.
set -euo pipefail
source book/gen/timeline.bash
RUNTIME_TRACE="$timeline_dir/trace.json" RUNTIME_SLOW_POLL_MS=3600000 RUST_LOG=off \
  target/debug/snake --port 0 --rate 20 --width 20 --height 12 >"$timeline_dir/out" 2>&1 &
server=$!
until [ -s "$timeline_dir/out" ]; do sleep 0.05; done
port=$(sed -E 's|.*127\.0\.0\.1:([0-9]+)/.*|\1|;q' "$timeline_dir/out")
# Two players join, one steers, both see a few ticks; then Ctrl-C, and
# both answer the server's close frame.
.ci/venv/bin/python - "$port" "$server" <<'PY'
import os, signal, sys
from websockets.sync.client import connect

port, server = sys.argv[1], int(sys.argv[2])
alice = connect(f"ws://127.0.0.1:{port}/ws?name=alice")
bob = connect(f"ws://127.0.0.1:{port}/ws?name=bob")
for ws in (alice, bob):
    ws.recv(timeout=10)  # the hello
alice.send("up")
for _ in range(4):
    for ws in (alice, bob):
        ws.recv(timeout=10)
os.kill(server, signal.SIGINT)
for ws in (alice, bob):
    try:
        while True:
            ws.recv(timeout=10)
    except Exception:
        assert ws.close_code == 1001, ws.close_code
PY
wait "$server"
draw timeline-snake "The snake server: two players, then Ctrl-C"
