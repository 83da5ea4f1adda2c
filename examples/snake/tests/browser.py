"""Drives headless Chromium through the DevTools protocol to play the game
for real: open the page, check that the canvas draws the field and our
snake, press a key, and check that the snake turned. tests/browser.rs runs
it with Chromium's DevTools port; it exits non-zero, saying why, on any
failure. `websockets` speaks to the DevTools WebSocket."""
import json
import sys
import time
import urllib.request

from websockets.sync.client import connect

devtools_port, page_url = int(sys.argv[1]), sys.argv[2]


def targets():
    with urllib.request.urlopen(f"http://127.0.0.1:{devtools_port}/json/list", timeout=10) as r:
        return json.load(r)


page = next(t for t in targets() if t["type"] == "page")
ws = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10)
next_id = 0


def call(method, **params):
    global next_id
    next_id += 1
    ws.send(json.dumps({"id": next_id, "method": method, "params": params}))
    while True:
        reply = json.loads(ws.recv(timeout=30))
        if reply.get("id") == next_id:
            if "error" in reply:
                raise SystemExit(f"{method}: {reply['error']}")
            return reply["result"]


def evaluate(expression):
    result = call("Runtime.evaluate", expression=expression, returnByValue=True)
    if "exceptionDetails" in result:
        raise SystemExit(f"{expression}: {result['exceptionDetails']}")
    return result["result"].get("value")


def wait_for(expression, what, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = evaluate(expression)
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


call("Page.navigate", url=page_url)
first = wait_for("window.lastScreen && window.lastScreen.head && window.lastScreen.tick", "the first frame")
# Several ticks later (deltas applied on top of the first, full frame), the
# canvas shows the view at the size the frames ask for, with our snake.
me_alive = f"""(() => {{
  const s = window.lastScreen, c = document.getElementById('field');
  return s.tick >= {first} + 5 && s.head && c.width > 0 && c.width % s.w === 0 && c.height % s.h === 0;
}})()"""
wait_for(me_alive, "our snake, alive, five ticks on, on a canvas the size of the view")
drawn = evaluate("""(() => {
  const c = document.getElementById('field'), ctx = c.getContext('2d');
  const d = ctx.getImageData(0, 0, c.width, c.height).data;
  let lit = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i] > 0x60 || d[i + 1] > 0x60) lit++;
  return lit;
})()""")
if not drawn:
    raise SystemExit("nothing is drawn on the canvas")
# Our head is drawn where the frame says, as a head of some color.
head_cell = evaluate("""(() => {
  const s = window.lastScreen;
  return s.cells[(s.head[1] - s.y) * s.w + (s.head[0] - s.x)];
})()""")
if not 12 <= head_cell < 22:
    raise SystemExit(f"the cell under our head holds {head_cell}, not a head")

# Our heading, from the last two ticks' heads; then a key press at a right
# angle to it, sent as a real keyboard event.
step = """(() => {
  const h = window.heads, [t1, a] = h[h.length - 2], [t2, b] = h[h.length - 1];
  return a && b && t2 === t1 + 1 ? [b[0] - a[0], b[1] - a[1], t2] : null;
})()"""
dx, dy, tick = wait_for(step, "two ticks in a row with our snake alive")
key, code, want = ("ArrowUp", 38, [0, -1]) if dy == 0 else ("ArrowLeft", 37, [-1, 0])
for kind in ("keyDown", "keyUp"):
    call("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=code)
turned = f"""(() => {{
  const s = {step};
  return s && s[2] > {tick} && s[0] === {want[0]} && s[1] === {want[1]};
}})()"""
wait_for(turned, f"the snake to turn after {key}")
print("ok")
