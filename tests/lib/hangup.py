"""A client of a profile that does something odd while it is being taken.

python3 hangup.py PORT MODE SECONDS asks GET /debug/pprof/profile?seconds=
SECONDS, waits 0.5 s, and then, by MODE:
  half         shuts down its sending side (shutdown(SHUT_WR)) and reads on
  extra-stay   sends 4 bytes more and reads on
  extra-close  sends 4 bytes more, then closes its socket
Prints what it read as JSON: {"statuses": [...], "body_bytes": N}, the
status codes in the order they came (a 100 before the final one is fine).
"""
import json
import socket
import sys
import time

port, mode, seconds = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET /debug/pprof/profile?seconds=%d HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % seconds)
time.sleep(0.5)
if mode == "half":
    s.shutdown(socket.SHUT_WR)
elif mode in ("extra-stay", "extra-close"):
    s.sendall(b"junk")
    if mode == "extra-close":
        time.sleep(0.2)
        s.close()
        print(json.dumps({"statuses": [], "body_bytes": 0}))
        sys.exit(0)
else:
    raise SystemExit("unknown mode " + mode)

s.settimeout(seconds + 60)
data = b""
statuses = []
body = 0
while True:
    # Parse responses as they complete: 1xx ones have no body.
    head_end = data.find(b"\r\n\r\n")
    if head_end >= 0:
        head = data[:head_end].decode("latin-1").split("\r\n")
        code = int(head[0].split()[1])
        statuses.append(code)
        data = data[head_end + 4:]
        if code >= 200:
            length = [int(h.split(":", 1)[1]) for h in head
                      if h.lower().startswith("content-length:")]
            want = length[0] if length else None
            while want is not None and len(data) < want:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            body = len(data) if want is None else min(len(data), want)
            break
        continue
    try:
        chunk = s.recv(65536)
    except (ConnectionResetError, socket.timeout):
        chunk = b""
    if not chunk:
        break
    data += chunk
print(json.dumps({"statuses": statuses, "body_bytes": body}))
