#!/bin/bash
# What each piece of the sampling program costs in the kernel (issue 19,
# goal 3): the whole system at 999 Hz, two busy copies of a workload on the
# two CPUs, and `profd record` run with PROFD_BENCH_CUT=N, which stops every
# sample after piece N (src/bpf/cpu.bpf.c, enum bench_cut):
#
#   1 filter   the program's invocation, the session's config, the target filter
#   2 state    + the process's state (proc_state, first-sample check)
#   3 walk     + user registers, kernel stack when in the kernel, frame-pointer walk
#   4 copy     + the user-stack copy into the per-CPU buffer, no ring output
#   0 full     + the ring output (the production program)
#
# and, in the same round, bpftrace's `profile:hz:999 { @[ustack, kstack,
# comm] = count(); }`.  Each piece is the difference of two cuts' medians.
# Time per run is run_time_ns / run_cnt (kernel.bpf_stats_enabled) over a
# window in the middle of each run, read from the fdinfo of that process's
# programs.  Each round runs every cut and bpftrace once, in a shuffled
# order: on this shared VM one run's figure can be twice the next one's,
# and a fixed order would lay slow spells on the same piece every round.
# Env: W (workloads, default "inline_target nofp_target": frame pointers,
# and none, which needs the stack copy), ROUNDS (5), SECS (5), FREQ (999),
# PROFD (build/profd).  One JSON object per workload on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5} SECS=${SECS:-5} FREQ=${FREQ:-999}
W=${W:-inline_target nofp_target}
PROFD=${PROFD:-$PWD/build/profd}
export BUILD=${BUILD:-$PWD/build} TESTS=$PWD/tests
. tests/lib/common.sh
. bench/lib/bpf_stats.sh
old=$(sysctl -n kernel.bpf_stats_enabled)
trap 'kill $(jobs -p) 2>/dev/null || true; sysctl -qw kernel.bpf_stats_enabled=$old; cleanup_common' EXIT
sysctl -qw kernel.bpf_stats_enabled=1
command -v bpftrace >/dev/null || fail "no bpftrace (make test-deps)"

# window PID: ns per run over the middle of a SECS-long run.
window() {
	local a b
	for _ in $(seq 100); do
		[ "$(bpf_prog_stat_of "$1" 7 | cut -d' ' -f2)" -gt 0 ] && break
		sleep 0.1
	done
	sleep 1
	a=$(bpf_prog_stat_of "$1" 7)
	sleep $((SECS - 3))
	b=$(bpf_prog_stat_of "$1" 7)
	echo "$a $b" | awk '{ printf "%.1f %d\n", ($3 - $1) / ($4 - $2 > 0 ? $4 - $2 : 1), $4 - $2 }'
}

for w in $W; do
	"$BUILD/tests/$w" $((ROUNDS * (SECS + 3) * 8)) >/dev/null &
	W1=$!
	"$BUILD/tests/$w" $((ROUNDS * (SECS + 3) * 8)) >/dev/null &
	W2=$!
	rows=$WORK/rows.$w
	: >"$rows"
	for r in $(seq "$ROUNDS"); do
		for cut in $(shuf -e 1 2 3 4 0 bpftrace); do
			if [ "$cut" = bpftrace ]; then
				bpftrace -e "profile:hz:$FREQ { @[ustack, kstack, comm] = count(); }" \
					>/dev/null 2>"$WORK/bt.err" &
				B=$!
				read -r ns n < <(window $B)
				stop_bpftrace $B
			else
				PROFD_BENCH_CUT=$cut "$PROFD" record --seconds "$SECS" --frequency "$FREQ" \
					-o "$WORK/p.pb.gz" 2>"$WORK/err" &
				P=$!
				read -r ns n < <(window $P)
				wait $P || fail "profd record (cut $cut) failed: $(tail -3 "$WORK/err")"
			fi
			echo "$w round $r $cut: $ns ns per run ($n runs)" >&2
			echo "$cut $ns $n" >>"$rows"
		done
	done
	kill $W1 $W2 2>/dev/null || true
	wait $W1 $W2 2>/dev/null || true
	python3 - "$rows" "$w" <<'PY'
import json, statistics, sys
by = {}
for line in open(sys.argv[1]):
    k, ns, n = line.split()
    by.setdefault(k, []).append(float(ns))
med = {k: statistics.median(v) for k, v in by.items()}
pieces = {"filter": med["1"], "state": med["2"] - med["1"], "walk": med["3"] - med["2"],
          "copy": med["4"] - med["3"], "ring": med["0"] - med["4"]}
print(json.dumps({"workload": sys.argv[2], "rounds": {k: v for k, v in by.items()},
                  "median_ns": {"full": med["0"], "cut_filter": med["1"], "cut_state": med["2"],
                                "cut_walk": med["3"], "cut_copy": med["4"],
                                "bpftrace": med["bpftrace"]},
                  "pieces_ns": {k: round(v, 1) for k, v in pieces.items()},
                  "ratio_to_bpftrace": round(med["0"] / med["bpftrace"], 3)}))
PY
done
