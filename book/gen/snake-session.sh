# The snake server and one player, spoken to by Python's websockets
# library (.ci/venv, which .ci/test installs): the handshake's answer, the
# hello, the first state, a turn, and the close handshake; then the
# server's log of it. Ports become PORT and tick numbers N.
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
"$root/.ci/venv/bin/python" - "$port" <<'PY' | sed -E 's/"tick":[0-9]+/"tick":N/'
import json, sys
from websockets.sync.client import connect

with connect(f"ws://127.0.0.1:{sys.argv[1]}/ws?name=alice") as ws:
    print(ws.response.status_code, ws.response.reason_phrase,
          "(the library checked Sec-WebSocket-Accept)")
    print("<", ws.recv(timeout=10))
    state = ws.recv(timeout=10)
    print("<", state)
    print("> left")
    ws.send("left")
    for _ in range(2):
        s = json.loads(ws.recv(timeout=10))
        print("< (tick N) alice's head:", s["snakes"][0]["body"][0])
print("closed with", ws.close_code)
PY
sleep 0.2
echo
echo '(the server'"'"'s log)'
sed -E -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:PORT/g' -e 's/^\[[^]]*\] //' "$dir/log"
