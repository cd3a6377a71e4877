#!/bin/bash
# A config that cannot crash-loop (issue 20, item 5): a default target that
# is gone or not there yet does not stop `profd serve`.
#   - --pid of a process that has exited: logged and dropped, the daemon
#     serves /health, and a request naming no targets says why (404) while
#     one naming its own is served;
#   - --exe NAME of a program not running, and --exe PATH of a file that does
#     not exist yet: the daemon serves, and profiles the program once it runs;
#   - a default pid that exits while the daemon runs is dropped at the next
#     request, logged once; the other default targets are still profiled.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

# A pid that is surely gone: a child that has been reaped.
sleep 0 &
DEAD=$!
wait $DEAD
kill -0 $DEAD 2>/dev/null && fail "pid $DEAD still exists"

# --- every default target gone: serves, says why, serves requests naming targets
serve "$(free_port 17950)" --pid "$DEAD"
grep -q "default target pid $DEAD is gone: dropped, still serving" "$WORK/serve.err" ||
	fail "no log line for the gone pid"
call health GET /health
expect_code health 200 "/health with the default pid gone"
call scrape GET "/debug/pprof/profile?seconds=1"
expect_code scrape 404 "a scrape with every default target gone"
body scrape | grep -q "every default target is gone" || fail "the 404 says: $(body scrape)"
"$BUILD/tests/inline_target" 60 >/dev/null &
LIVE=$!
PIDS_TO_KILL+=("$LIVE")
call post POST /profile/cpu -H 'Content-Type: application/json' \
	-d "{\"profiler\": {\"BccProfile\": null}, \"timeout_seconds\": 2, \"targets\": {\"pids\": [$LIVE]}}"
expect_code post 200 "POST naming a live pid"
n=$(pprof_check "$WORK/post.body" "POST naming a live pid")
call sessions GET /sessions
python3 -c 'import json,sys; t = json.load(open(sys.argv[1]))["targets"]; assert t == {"pids": [], "exes": [], "none_left": True}, t' \
	"$WORK/sessions.body" || fail "/sessions: $(body sessions)"
kill "$SERVE_PID"
wait "$SERVE_PID" || fail "serve exited $? on SIGTERM"
pass "--pid $DEAD (gone): logged, /health 200, a scrape 404 saying why, a POST naming pid $LIVE served ($n samples)"

# --- --exe NAME not running and --exe PATH not there yet, and a pid that exits later
mkdir -p "$WORK/bin"
NAME=profd_late_$$
cp "$BUILD/tests/inline_target" "$WORK/bin/$NAME"
LATE=$WORK/bin/later_$$
"$BUILD/tests/inline_target" 60 >/dev/null &
SHORT=$!
PIDS_TO_KILL+=("$SHORT")
serve "$(free_port 17960)" --exe "$NAME" --exe "$LATE" --pid "$SHORT"
grep -q "default target $LATE does not exist yet" "$WORK/serve.err" ||
	fail "no log line for the path not there yet"
kill "$SHORT"
wait "$SHORT" 2>/dev/null || true
call health GET /health
expect_code health 200 "/health"
# The program starts after the daemon: its samples are in the next profile.
"$WORK/bin/$NAME" 60 >/dev/null &
P1=$!
PIDS_TO_KILL+=("$P1")
call late GET "/debug/pprof/profile?seconds=2&labels=pid"
expect_code late 200 "a scrape after the pid exited and $NAME started"
python3 - "$WORK/late.body" "$P1" "$SHORT" <<'PY' || fail "profile of --exe $NAME started late"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
pids = {s["labels"].get("pid") for s in p.samples}
assert pids == {sys.argv[2]}, f"pids {pids}, want only {sys.argv[2]}"
assert any("hot_a" in p.frames(s) for s in p.samples), "no hot_a"
PY
[ "$(grep -c "default target pid $SHORT is gone" "$WORK/serve.err")" = 1 ] ||
	fail "the pid that exited is not logged once: $(grep -c "pid $SHORT is gone" "$WORK/serve.err")"
# The path comes into being and runs: profiled too (matched by its path).
cp "$BUILD/tests/inline_target" "$LATE"
"$LATE" 60 >/dev/null &
P2=$!
PIDS_TO_KILL+=("$P2")
call both GET "/debug/pprof/profile?seconds=2&labels=pid"
expect_code both 200 "a scrape after $LATE started"
python3 - "$WORK/both.body" "$P1" "$P2" <<'PY' || fail "profile of --exe $LATE created late"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
pids = {s["labels"].get("pid") for s in p.samples}
assert pids == {sys.argv[2], sys.argv[3]}, f"pids {pids}, want {sys.argv[2:]}"
PY
pass "--exe $NAME (not running) and --exe $LATE (no such file yet) served, then profiled once started; --pid $SHORT dropped once when it exited"
