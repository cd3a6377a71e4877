"""Slow clients against profd serve, with /health timed from beside them.

python3 trickle.py PORT N SECONDS [--no-health] prints one JSON object:
  dropped     how many of the N trickling clients the daemon closed
  drop_max_s  the latest drop, in seconds after that client connected
  refused     how many were answered 503 instead (the connection cap)
  health      /health latencies in ms, each on a new connection, while
              the trickling clients were open; -1 for a 503, -2 for
              anything else, -3 for no answer in 5 s
/health is timed by a separate process, on its own connections.  Each
trickling client sends a request's first line and then one header
byte a second, for SECONDS at most, as a slowloris client does.
"""
import json
import os
import selectors
import socket
import sys
import time

port, n, limit = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
with_health = sys.argv[4:] != ["--no-health"]


def health_ms():
    t = time.monotonic()
    data = b""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return -3
    if data.startswith(b"HTTP/1.1 503"):
        return -1
    if not data.startswith(b"HTTP/1.1 200"):
        return -2
    return (time.monotonic() - t) * 1000


def health_child(fd, stop_after):
    """Time /health until the parent says stop (or stop_after seconds)."""
    out = []
    end = time.monotonic() + stop_after
    os.set_blocking(fd, False)
    while with_health and time.monotonic() < end:
        try:
            if os.read(fd, 1) is not None:
                break
        except BlockingIOError:
            pass
        out.append(health_ms())
        time.sleep(0.02)
    return out


sel = selectors.DefaultSelector()
clients = {}
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setblocking(False)
    s.send(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    clients[s] = {"start": time.monotonic(), "end": None, "data": b""}
    sel.register(s, selectors.EVENT_READ)

stop_r, stop_w = os.pipe()
res_r, res_w = os.pipe()
child = os.fork()
if child == 0:
    os.close(stop_w)
    data = json.dumps(health_child(stop_r, limit)).encode()
    os.write(res_w, data)
    os._exit(0)
os.close(stop_r)
os.close(res_w)
start = time.monotonic()
next_byte = start + 1
while any(c["end"] is None for c in clients.values()):
    now = time.monotonic()
    if now - start > limit:
        break
    for key, _ in sel.select(timeout=0.05):
        c = clients[key.fileobj]
        try:
            chunk = key.fileobj.recv(4096)
        except ConnectionResetError:
            chunk = b""
        c["data"] += chunk
        if not chunk:
            c["end"] = time.monotonic()
            sel.unregister(key.fileobj)
    if now >= next_byte:
        next_byte += 1
        for s, c in clients.items():
            if c["end"] is None:
                try:
                    s.send(b"X")
                except OSError:
                    pass
    # /health is timed while most are still open.
    if stop_w is not None and sum(c["end"] is None for c in clients.values()) <= n // 2:
        os.close(stop_w)
        stop_w = None
if stop_w is not None:
    os.close(stop_w)
raw = b""
while True:
    chunk = os.read(res_r, 65536)
    if not chunk:
        break
    raw += chunk
os.waitpid(child, 0)
health = json.loads(raw)

ends = [c for c in clients.values() if c["end"] is not None]
refused = [c for c in ends if c["data"].startswith(b"HTTP/1.1 503")]
dropped = [c for c in ends if not c["data"]]
print(json.dumps({
    "dropped": len(dropped),
    "refused": len(refused),
    "open": n - len(ends),
    "drop_max_s": max([c["end"] - c["start"] for c in dropped], default=None),
    "health": health,
}))
