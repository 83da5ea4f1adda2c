# The snake server and one player, spoken to by Python's websockets
# library (.ci/venv, which .ci/test installs): the handshake's answer, the
# hello, the first frame (full: the whole view, drawn as text), a turn
# and the deltas after it, and the close handshake; then the server's log
# of it. Ports become PORT and tick numbers N.
set -euo pipefail
root=$PWD
dir=$(mktemp -d)
RUST_LOG=info "$root/target/debug/snake" --port 0 --rate 20 --width 20 --height 12 \
  >"$dir/out" 2>"$dir/log" &
server=$!
trap 'kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
until [ -s "$dir/out" ]; do sleep 0.05; done
port=$(sed -E 's|.*127\.0\.0\.1:([0-9]+)/.*|\1|;q' "$dir/out")
echo '$ cargo run -p snake -- --rate 20 --width 20 --height 12'
sed -E 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/' "$dir/out"
echo
echo '$ python3 client.py     # Python'"'"'s websockets library; the script is in book/gen/snake-session.sh'
"$root/.ci/venv/bin/python" - "$port" <<'PY' | sed -E 's/tick [0-9]+/tick N/'
import struct, sys
from websockets.sync.client import connect

CELLS = {0: ".", 1: "*"}  # empty, food; a snake: its color's digit, a head as a letter


def show(frame):
    """One frame, decoded as src/view.rs says: its header, then the cells
    (a full frame) or the changes (a delta)."""
    (kind, tick, fw, fh, x, y, w, h, flags, score, hx, hy,
     players) = struct.unpack_from(">BIHHHHBBBIHHI", frame)
    at, board = 28, []
    if flags & 2:
        at += 1
        for _ in range(frame[28]):
            pid, color, alive, points, n = struct.unpack_from(">IBBIB", frame, at)
            board.append(f"{frame[at + 11:at + 11 + n].decode()} {points}")
            at += 11 + n
    head = f"head ({hx}, {hy})" if flags & 1 else "dead"
    print(f"< {'full' if kind == 1 else 'delta'}, tick {tick}: {len(frame)} bytes; "
          f"field {fw}x{fh}, view {w}x{h} at ({x}, {y}); {head}, {score} points, "
          f"{players} player(s)" + (f"; scoreboard: {', '.join(board)}" if board else ""))
    if kind == 1:
        for row in range(h):
            line = frame[at + row * w:at + (row + 1) * w]
            print("    " + "".join(CELLS.get(c, str(c - 2) if c < 12 else "ABCDEFGHIJ"[c - 12]) for c in line))
    else:
        (n,) = struct.unpack_from(">H", frame, at)
        changes = [struct.unpack_from(">BBB", frame, at + 2 + 3 * i) for i in range(n)]
        print("    changes: " + ", ".join(f"({cx}, {cy}) -> {c}" for cx, cy, c in changes))


with connect(f"ws://127.0.0.1:{sys.argv[1]}/ws?name=alice") as ws:
    print(ws.response.status_code, ws.response.reason_phrase,
          "(the library checked Sec-WebSocket-Accept)")
    print("<", ws.recv(timeout=10))
    show(ws.recv(timeout=10))
    print("> left")
    ws.send("left")
    for _ in range(2):
        show(ws.recv(timeout=10))
print("closed with", ws.close_code)
PY
sleep 0.2
echo
echo '(the server'"'"'s log)'
sed -E -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' -e 's/^\[[^]]*\] //' "$dir/log"
