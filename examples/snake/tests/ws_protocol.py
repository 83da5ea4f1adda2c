"""The snake server, checked by a WebSocket client from outside the project:
Python's `websockets` (installed by .ci/test into .ci/venv), which checks
every frame the server sends against RFC 6455. tests/python.rs runs it with
the server's port; it exits non-zero, saying why, on any failure."""
import json
import sys

from websockets.exceptions import ConnectionClosedError
from websockets.sync.client import connect

port = int(sys.argv[1])
url = f"ws://127.0.0.1:{port}/ws?name=python%20client"

with connect(url, open_timeout=10, close_timeout=10) as ws:
    me = json.loads(ws.recv(timeout=10))["you"]
    state = json.loads(ws.recv(timeout=10))
    mine = [s for s in state["snakes"] if s["id"] == me]
    assert mine and mine[0]["name"] == "python client", state
    # Every tick, in order.
    ticks = [state["tick"]] + [json.loads(ws.recv(timeout=10))["tick"] for _ in range(3)]
    assert ticks == list(range(ticks[0], ticks[0] + 4)), ticks
    # A ping comes back as a pong with the same data.
    assert ws.ping(b"ping-data").wait(timeout=10), "no pong"
    # A text message in three fragments is one command.
    ws.send(iter(["ri", "gh", "t"]))
    json.loads(ws.recv(timeout=10))
# Leaving the block sent a close 1000: the server answered with the same.
assert ws.close_code == 1000, ws.close_code

# A binary message is not a command: ignored, and the game goes on.
with connect(url, open_timeout=10, close_timeout=10) as ws:
    ws.recv(timeout=10)
    ws.send(b"\x00\x01")
    ws.recv(timeout=10)

# A message over the server's limit (16 KiB): closed with 1009.
with connect(url, open_timeout=10, close_timeout=10, max_size=None) as ws:
    ws.recv(timeout=10)
    ws.send("x" * 100_000)
    try:
        while True:
            ws.recv(timeout=10)
    except ConnectionClosedError as e:
        assert e.rcvd is not None and e.rcvd.code == 1009, e
print("ok")
