#!/bin/bash
# SVG flamegraphs, from `profd record --format svg`, from
# GET /debug/pprof/profile?format=svg and from GET /profile/heap?format=svg
# (bytes, retain_malloc:retain_calloc 3:1): well-formed XML (xmllint), one frame
# per function with "name (N samples, P%)" titles, widths proportional to
# samples (hot_a:hot_b stays 2:1), kinds told apart (root, user, inlined,
# kernel).  Also GET /sessions and GET / (the page) as curl sees them.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"
command -v xmllint >/dev/null || { echo "skip: no xmllint (make test-deps)"; exit 77; }

"$BUILD/tests/inline_target" 60 >/dev/null &
W=$!
PIDS_TO_KILL+=("$W")
sleep 0.3

# profd record --format svg
"$PROFD" record --pid "$W" --seconds 3 --frequency 999 --format svg -o "$WORK/rec.svg" 2>/dev/null
xmllint --noout "$WORK/rec.svg" || fail "record: the SVG is not well-formed"
out=$(python3 "$TESTS/lib/flame_check.py" "$WORK/rec.svg" hot_a hot_b 2 0.15) ||
	fail "record: the SVG's frames are wrong"
echo "$out"
python3 - "$WORK/rec.svg" <<'PY' || fail "record: frame kinds or chain are wrong"
import sys
from flame_check import load
root, frames = load(sys.argv[1])
by = {}
for f in frames:
    by.setdefault(f["name"], set()).add(f["kind"])
assert by.get("inline_target") == {"r"}, ("root frame is the process name", by.get("inline_target"))
assert by.get("hot_a") == {"u"} and by.get("run_workload") == {"u"}, by
assert by.get("mix") == {"i"}, ("mix() is always inlined", by.get("mix"))
# hot_a sits on run_workload, one row up, inside its span.
rw = [f for f in frames if f["name"] == "run_workload"][0]
ha = [f for f in frames if f["name"] == "hot_a"][0]
assert ha["y"] == rw["y"] - 16 and rw["x"] <= ha["x"] and ha["x"] + ha["w"] <= rw["x"] + rw["w"] + 0.2
sub = open(sys.argv[1]).read()
assert "targets: pid" in sub and " Hz" in sub and "total " in sub, "subtitle: targets, frequency, total"
print("ok: kinds", {k: sorted(v) for k, v in by.items() if k in ("inline_target", "hot_a", "mix")})
PY
pass "record --format svg: well-formed, hot_a:hot_b widths 2:1, root/user/inlined kinds"

# Kernel frames: a process that lives in read(2) and write(2).
dd if=/dev/zero of=/dev/null bs=512 count=100000000 2>/dev/null &
DD=$!
PIDS_TO_KILL+=("$DD")
"$PROFD" record --pid "$DD" --seconds 1 --frequency 199 --format svg -o "$WORK/dd.svg" 2>/dev/null
kill "$DD"
xmllint --noout "$WORK/dd.svg" || fail "dd: the SVG is not well-formed"
grep -q '<g class="k"><title>ksys_write (' "$WORK/dd.svg" || fail "dd: no kernel-coloured ksys_write frame"
pass "kernel frames get the kernel kind"

PORT=$(free_port 17260)
serve "$PORT" --pid "$W"

call page GET /
expect_code page 200 "GET /"
[ "$(header page Content-Type)" = "text/html; charset=utf-8" ] || fail "GET /: $(header page Content-Type)"
header page Content-Security-Policy | grep -q "default-src 'self'" || fail "GET /: no CSP"
grep -q '<form id="cpu-form">' "$WORK/page.body" || fail "GET /: no CPU form"
! grep -Eiq '(src|href)="//|https?://|@import' "$WORK/page.body" || fail "GET /: loads something from elsewhere"
pass "GET / is a self-contained page"

# A profile in flight shows in /sessions.
curl -s -m 30 -D "$WORK/svg.hdr" -o "$WORK/svg.body" -w '%{http_code}' \
	"$BASE/debug/pprof/profile?seconds=3&frequency=999&format=svg" >"$WORK/svg.code" &
CURL=$!
for _ in $(seq 20); do
	call sessions GET /sessions
	grep -q '"route":"/debug/pprof/profile"' "$WORK/sessions.body" && break
	sleep 0.1
done
python3 - "$WORK/sessions.body" "$W" <<'PY' || fail "GET /sessions: $(body sessions)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["targets"] == {"pids": [int(sys.argv[2])], "exes": []}, d["targets"]
s = d["sessions"]
assert len(s) == 1 and s[0]["route"] == "/debug/pprof/profile" and s[0]["method"] == "GET", s
assert s[0]["frequency"] == 999 and s[0]["elapsed_seconds"] < 3.5, s
PY
pass "GET /sessions lists the targets and the profile in flight"

wait "$CURL"
[ "$(cat "$WORK/svg.code")" = 200 ] || fail "format=svg: status $(cat "$WORK/svg.code"): $(head -c 300 "$WORK/svg.body")"
[ "$(header svg Content-Type)" = "image/svg+xml; charset=utf-8" ] || fail "format=svg: $(header svg Content-Type)"
xmllint --noout "$WORK/svg.body" || fail "format=svg: not well-formed"
python3 "$TESTS/lib/flame_check.py" "$WORK/svg.body" hot_a hot_b 2 0.15 || fail "format=svg: frames are wrong"
pass "GET /debug/pprof/profile?format=svg: well-formed, hot_a:hot_b widths 2:1"

# Heap: the same renderer, in bytes.  heap_target keeps 48 MiB from
# retain_malloc and 16 MiB from retain_calloc (3:1) once signalled.
kill "$SERVE_PID"
wait "$SERVE_PID" || true
"$BUILD/tests/heap_target" >"$WORK/ht.out" &
H=$!
PIDS_TO_KILL+=("$H")
for _ in $(seq 50); do grep -q ready "$WORK/ht.out" && break; sleep 0.1; done
serve "$(free_port 17270)" --heap --pid "$H" --heap-sample-bytes 65536
kill -USR1 "$H"
for _ in $(seq 100); do grep -q "^done" "$WORK/ht.out" && break; sleep 0.1; done
grep -q "^done" "$WORK/ht.out" || fail "heap_target did not finish"
call heap GET "/profile/heap?format=svg"
expect_code heap 200 "heap format=svg"
[ "$(header heap Content-Type)" = "image/svg+xml; charset=utf-8" ] || fail "heap svg: $(header heap Content-Type)"
xmllint --noout "$WORK/heap.body" || fail "heap svg: not well-formed"
python3 "$TESTS/lib/flame_check.py" "$WORK/heap.body" retain_malloc retain_calloc 3 0.3 ||
	fail "heap svg: frames are wrong"
grep -q '<title>retain_malloc ([0-9,]* bytes, ' "$WORK/heap.body" || fail "heap svg: titles don't count bytes"
pass "GET /profile/heap?format=svg: well-formed, in bytes, retain_malloc:retain_calloc widths 3:1"
