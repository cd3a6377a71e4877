#!/bin/bash
# Runqueue delay as its own state (issue 24): a wall-clock profile's samples
# carry the label state, "cpu" (on CPU), "runqueue" (switched out runnable:
# preempted, waiting for a CPU) or "sleep" (blocked).  A CPU-bound process
# pinned (taskset) to one CPU beside a second burner pinned to the same CPU
# gets about half of it, less on a loaded machine: its wall time is cpu
# and runqueue, the runqueue part at least what the burner took (a third
# of the window at least: others' load only adds to it), and no sleep.  Its off-CPU profile, of blocked time
# only, stays empty: preemption is no wait.
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v taskset >/dev/null || { echo "skip: no taskset (util-linux)"; exit 77; }
CPU=$(($(nproc) - 1))
taskset -c $CPU sh -c 'while :; do :; done' &
TARGET=$!
PIDS_TO_KILL+=("$TARGET")
taskset -c $CPU sh -c 'while :; do :; done' &
PIDS_TO_KILL+=("$!")

# A 1 ms period: the ~3 ms waits for the CPU are kept whole, so what is
# asserted is the accounting, not sampling by duration's variance.
start_record --wall --off-cpu-period-us 1000 --pid $TARGET --seconds 4 -o "$WORK/wall.pb.gz"
wait $RECORD_PID || fail "profd record --wall: $(tail -3 "$WORK/record.err")"
start_record --off-cpu --off-cpu-period-us 1000 --pid $TARGET --seconds 2 -o "$WORK/off.pb.gz"
wait $RECORD_PID || fail "profd record --off-cpu: $(tail -3 "$WORK/record.err")"
"$PROFD" record --wall --off-cpu-period-us 1000 --pid $TARGET --seconds 2 --format svg \
	--split state -o "$WORK/state.svg" 2>"$WORK/record.err" || fail "record --split state"

python3 - "$WORK/wall.pb.gz" "$WORK/off.pb.gz" "$WORK/state.svg" <<'PY' || fail "runqueue delay"
import re, sys, pprof_raw
from collections import Counter
p = pprof_raw.load(sys.argv[1])
window = p.duration_ns / 1e9
by = Counter()
for s in p.samples:
    by[s["labels"].get("state")] += s["values"][1] / 1e9
print(f"wall-clock over {window:.2f} s: " + ", ".join(f"{k}: {v:.3f} s" for k, v in by.most_common()))
assert set(by) <= {"cpu", "runqueue", "sleep"}, f"samples without a state: {by}"
# How much of the window a thread's wall time covers is t_wall.sh's to
# bound; here: nothing counted twice, and the split.
total = by["cpu"] + by["runqueue"] + by["sleep"]
assert total <= 1.1 * window, f"{total:.3f} s of a {window:.2f} s window"
assert by["runqueue"] >= window / 3, f"runqueue {by['runqueue']:.3f} s: the burner beside it took about half"
assert by["cpu"] > 0, "no time on CPU"
assert by["sleep"] <= 0.05 * window, f"sleep {by['sleep']:.3f} s: it never blocks"
off = pprof_raw.load(sys.argv[2])
blocked = sum(s["values"][1] for s in off.samples) / 1e9
print(f"off-CPU (blocked) in {off.duration_ns / 1e9:.2f} s: {blocked:.3f} s")
assert blocked <= 0.05 * off.duration_ns / 1e9, f"preemption counted as off-CPU: {blocked:.3f} s"
roots = dict(re.findall(r"<title>(cpu|runqueue|sleep) \(([0-9.]+ [µm]?s), ", open(sys.argv[3], encoding="utf-8").read()))
print("split by state:", roots)
assert "cpu" in roots and "runqueue" in roots, roots
PY
pass "a preempted CPU-bound process: its wall time is cpu and runqueue, no sleep, no off-CPU time"
