"""The snake server, checked by a WebSocket client from outside the project:
Python's `websockets` (installed by .ci/test into .ci/venv), which checks
every frame the server sends against RFC 6455. tests/python.rs runs it with
the server's port; it exits non-zero, saying why, on any failure."""
import json
import struct
import sys

from websockets.exceptions import ConnectionClosedError
from websockets.sync.client import connect

port = int(sys.argv[1])
url = f"ws://127.0.0.1:{port}/ws?name=python%20client"


def header(frame):
    """A frame's kind and tick, and its scoreboard's (id, name) pairs if it
    carries one (the format is at the top of src/view.rs)."""
    assert isinstance(frame, bytes), frame
    kind, tick, _fw, _fh, _x, _y, _w, _h, flags, _score, _hx, _hy, _players = struct.unpack_from(
        ">BIHHHHBBBIHHI", frame
    )
    board = []
    if flags & 2:
        n, at = frame[28], 29
        for _ in range(n):
            pid, _color, _alive, _points, length = struct.unpack_from(">IBBIB", frame, at)
            at += 11
            board.append((pid, frame[at:at + length].decode()))
            at += length
    return kind, tick, board


with connect(url, open_timeout=10, close_timeout=10) as ws:
    hello = json.loads(ws.recv(timeout=10))
    me = hello["you"]
    assert hello["view"] == [40, 30], hello
    kind, tick, board = header(ws.recv(timeout=10))
    assert kind == 1, "the first frame is full"
    assert (me, "python client") in board, board
    # Every tick, in order, as deltas.
    frames = [header(ws.recv(timeout=10)) for _ in range(3)]
    assert [f[0] for f in frames] == [2, 2, 2], frames
    ticks = [tick] + [f[1] for f in frames]
    assert ticks == list(range(ticks[0], ticks[0] + 4)), ticks
    # A ping comes back as a pong with the same data.
    assert ws.ping(b"ping-data").wait(timeout=10), "no pong"
    # A text message in three fragments is one command.
    ws.send(iter(["ri", "gh", "t"]))
    header(ws.recv(timeout=10))
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
