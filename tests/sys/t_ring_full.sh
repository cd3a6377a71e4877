#!/bin/bash
# A daemon that stops reading: the per-CPU sample rings fill, the kernel
# side drops what does not fit and counts it, and once the daemon reads
# again the rings empty and samples come in as before.  Every sample taken
# is either in the profile or counted lost: delivered + lost is the
# workloads' CPU time at the frequency.  (docs/architecture.md, "a ring
# per CPU"; a ring holds 128 KiB, under half a second of 999 Hz samples.)
. "$(dirname "$0")/../lib/common.sh"
need_root

SECS=8 FREQ=999 STOP=3
"$BUILD/tests/inline_target" $((SECS + 60)) >/dev/null & A=$!
"$BUILD/tests/inline_target" $((SECS + 60)) >/dev/null & B=$!
PIDS_TO_KILL+=($A $B)
cputicks() { awk '{s += $14 + $15} END {print s}' /proc/$A/stat /proc/$B/stat; }
"$PROFD" record --pid $A --pid $B --seconds $SECS --frequency $FREQ -o "$WORK/p.pb.gz" \
	2>"$WORK/err" & R=$!
PIDS_TO_KILL+=($R)
# The workloads' CPU time from when the session starts ("profiling") to
# when it has ended ("profile:", after the build): what it sampled.
wait_line() {
	for _ in $(seq 600); do grep -q "$1" "$WORK/err" && return 0; sleep 0.1; done
	cat "$WORK/err"; fail "record never said \"$1\""
}
wait_line "profiling"
t0=$(cputicks)
# Stopped a second in, for STOP seconds.
sleep 1
kill -STOP $R
sleep $STOP
kill -CONT $R
wait_line "profile:"
t1=$(cputicks)
wait $R || { cat "$WORK/err"; fail "record failed after SIGSTOP/SIGCONT"; }
CPU_S=$(python3 -c "print(($t1 - $t0) / $(getconf CLK_TCK))")

python3 - "$WORK/p.pb.gz" $FREQ $SECS $STOP "$CPU_S" <<'PY'
import re, sys, pprof_raw
path, freq, secs, stop, cpu_s = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
p = pprof_raw.load(path)
got = p.total()
m = [re.search(r"lost samples: (\d+) \(ring buffer full: (\d+)", c) for c in p.comments]
m = [x for x in m if x]
assert m, p.comments
lost, lost_ring = int(m[0].group(1)), int(m[0].group(2))
# What the kernel side sampled, delivered or not (the session is within
# the window cpu_s was measured over, and a little shorter).
taken = cpu_s * freq
# A stop of STOP s drops what does not fit in the rings: at the workloads'
# share of the CPUs, STOP s of samples less the rings' ~450 each.
busy = cpu_s / secs
assert lost_ring >= 0.3 * (stop * busy * freq - 900), \
    f"{lost_ring} samples lost to full rings in a {stop} s stop at {busy:.2f} busy CPUs"
assert lost_ring == lost, (lost, lost_ring)
# Nothing vanishes: every sample is in the profile or counted lost.
assert 0.75 * taken <= got + lost <= 1.1 * taken, \
    f"{got} delivered + {lost} lost against {taken:.0f} taken ({cpu_s:.2f} CPU s at {freq} Hz)"
# And the daemon read again: what came after the stop is there, more than
# the rings could have held when it stopped.
assert got >= 0.3 * (secs - stop - 1) * busy * freq, f"only {got} samples delivered"
a = sum(s["values"][0] for s in p.samples if "hot_a" in p.frames(s))
assert a > 0.3 * got, f"hot_a in {a} of {got} samples: not symbolized after the stop"
print(f"ok: a {stop} s stop lost {lost} samples to full rings, counted; {got} delivered + "
      f"{lost} lost = {got + lost} against {taken:.0f} taken; {a} in hot_a")
PY
