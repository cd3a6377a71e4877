#!/bin/bash
# An always-on daemon with little to do stays asleep: a session whose
# target gives no samples (a sleeping process) must not wake the event loop
# ten times a second to find the ring empty.  The drain timer backs off to
# 800 ms (bpfobj.c); counted as the loop thread's voluntary context
# switches, which do not depend on how loaded the machine is.  Then the
# same daemon, under samples (a busy target), drains at the fast rate and
# loses none.
. "$(dirname "$0")/../lib/common.sh"
need_root
. "$TESTS/lib/serve.sh"

sleep 1000 &
IDLE=$!
PIDS_TO_KILL+=($IDLE)
serve "$(free_port 18100)" --pid $IDLE
T=8
# ctxt: the event loop's (the main thread's) voluntary context switches.
ctxt() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$SERVE_PID/task/$SERVE_PID/status"; }
curl -sf -m $((T + 60)) -o "$WORK/idle.pb.gz" \
	"$BASE/debug/pprof/profile?seconds=$((T + 4))&frequency=19" &
C=$!
# Let the timer back off (100, 200, 400, 800 ms) before counting: from
# when the session runs.
sessions_running 1
sleep 3
c0=$(ctxt)
sleep $T
c1=$(ctxt)
wait $C || fail "the idle scrape failed"
n=$((c1 - c0))
echo "idle: $n wakeups of the event loop in $T s"
# 10 a second at a fixed 100 ms; ~1.25 at 800 ms, plus the memory check
# (every 5 s) and the scrape's own request.
[ "$n" -le $((T * 3)) ] || fail "$n wakeups in $T s with nothing to read: the drain timer does not back off"

# Busy: samples come, the timer goes back to 100 ms, nothing is lost.
kill $SERVE_PID; wait $SERVE_PID 2>/dev/null || true
"$BUILD/tests/inline_target" 30 >/dev/null &
BUSY=$!
PIDS_TO_KILL+=($BUSY)
serve "$(free_port 18200)" --pid $BUSY
curl -sf -m 60 -o "$WORK/busy.pb.gz" "$BASE/debug/pprof/profile?seconds=3&frequency=499" ||
	fail "the busy scrape failed"
python3 - "$WORK/busy.pb.gz" <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
n = p.total()
# 3 s at 499 Hz of one busy thread: ~1500, less on a loaded machine.
assert n >= 300, f"only {n} samples of a busy process in 3 s at 499 Hz"
print(f"busy: {n} samples in 3 s")
PY
curl -sf -m 10 "$BASE/metrics" | awk '$1 == "profd_samples_lost_total" && $2 > 0 { bad = 1 } END { exit bad }' ||
	fail "samples lost: $(curl -sf -m 10 "$BASE/metrics" | grep '^profd_samples_lost')"
echo "ok: t_idle_cost"
