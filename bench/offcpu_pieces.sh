#!/bin/bash
# Where a kept off-CPU switch's kernel time goes (bench/offcpu_cost.sh's B,
# piece by piece), and the same for two profd builds side by side.  Run as
# root:
#   bash bench/offcpu_pieces.sh                       # this build's pieces
#   BINS="/tmp/old/profd build/profd" CUTS=0 bash bench/offcpu_pieces.sh
# For each profd in BINS (default build/profd) and each PROFD_BENCH_CUT in
# CUTS (default "0 1 2 3 4 5", sample.bpf.h's enum bench_cut: 1 the keep
# decision, 2 + the process's state, 3 + registers, kernel stack and
# frame-pointer walk, 4 + the user stack copy, 0 everything (the ring
# records, the switch-in's time); 5 everything but the kernel stack), in an
# order shuffled every round: `profd record --off-cpu --off-cpu-period-us 10
# --exe offcpu_target` (every switch of the workload kept) for SECS, and
# the same binary's non-target cost A (an off-CPU profile of a sleep).  Per
# target switch, switch-out and switch-in together: (run_time - non-target
# runs x A) / target switches, from kernel.bpf_stats_enabled and the
# program's own offcpu_stats.  Prints each run, then medians per binary
# and cut.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECS:-6} ROUNDS=${ROUNDS:-3} BINS=${BINS:-build/profd} CUTS=${CUTS:-0 1 2 3 4 5}
. tests/lib/common.sh
. bench/lib/bpf_stats.sh
bpf_stats_on

# measure BIN CUT ARGS...: offcpu_stats_of that profd near its end.
measure() {
	local bin=$1 cut=$2
	shift 2
	./build/tests/offcpu_target $((SECS + 10)) >/dev/null &
	local w=$!
	PROFD_BENCH_CUT=$cut $bin record --off-cpu --seconds $SECS "$@" -o $WORK/p.pb.gz 2>$WORK/err &
	local p=$!
	for _ in $(seq 300); do grep -q profiling $WORK/err 2>/dev/null && break; sleep 0.1; done
	sleep $((SECS - 1))
	offcpu_stats_of $p
	wait $p
	kill $w 2>/dev/null || true
	wait $w 2>/dev/null || true
}

sleep 100000 &
IDLE=$!
: >$WORK/rows
for r in $(seq $ROUNDS); do
	for run in $(for b in $BINS; do for c in $CUTS; do echo "$b:$c"; done; done | shuf); do
		bin=${run%:*} cut=${run##*:}
		read -r at ac _ _ _ _ < <(measure "$bin" 0 --pid $IDLE)
		read -r bt bc bs bk _ _ < <(measure "$bin" "$cut" --off-cpu-period-us 10 --exe offcpu_target)
		ns=$(python3 -c "
a = $at / max($ac, 1)
print(f'{a:.0f} {($bt - ($bc - 2 * $bs) * a) / max($bs, 1):.0f}')")
		echo "round $r $bin cut $cut: non-target, per target switch: $ns ns;" \
			"$bs target switches, $bk kept; load $(cut -d' ' -f1 /proc/loadavg)" >&2
		# A run whose workload was never seen (a loaded machine slow to
		# start either) says nothing.
		[ "$bs" -gt 0 ] && echo "$bin $cut $ns" >>$WORK/rows
	done
done
python3 - $WORK/rows <<'PY'
import statistics, sys
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    b, c, a, ns = line.split()
    runs[(b, int(c))].append(float(ns))
for (b, c), v in sorted(runs.items()):
    print(f"{b} cut {c}: {statistics.median(v):.0f} ns per target switch (runs "
          + ", ".join(f"{x:.0f}" for x in v) + ")")
PY
