#!/bin/bash
# Workload overhead of profilers, interleaved: no profiler, profd at 19 and
# 99 Hz, perf record -F 99 -g, and bpftrace profile:hz:99, all system-wide.
# Two workloads: two CPU-bound C processes (build/tests/inline_target, one
# per CPU; throughput = rounds done) and pgbench -S against PostgreSQL 15.
# Also the accounting: BPF run time (kernel.bpf_stats_enabled) plus the
# profiler's own CPU time while sampling, as a share of the CPU the
# workload used (all CPUs' busy time during the run, less the profiler's).
# Prints one JSON object per run on stdout.  Env: ROUNDS, SECS.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3} SECS=${SECS:-20}
export BUILD=$PWD/build TESTS=$PWD/tests
. tests/lib/common.sh
. tests/lib/postgres.sh
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled=$old_stats; stop_pg' EXIT

ticks() { # PIDS...: utime+stime in ns, summed (0 for gone ones)
	local t=0 p
	for p in "$@"; do
		[ -r /proc/$p/stat ] && t=$((t + $(awk '{print $14 + $15}' /proc/$p/stat)))
	done
	echo $((t * 1000000000 / $(getconf CLK_TCK)))
}
busy_ns() { # all CPUs' non-idle time (user nice system irq softirq steal), in ns
	awk '/^cpu / {printf "%.0f\n", ($2 + $3 + $4 + $7 + $8 + $9) * 1e9 / '$(getconf CLK_TCK)'}' /proc/stat
}
prog_ns() { # NAME-REGEX: run_time_ns and run_cnt of the newest perf_event program
	bpftool prog show -j | python3 -c '
import json, re, sys
ps = [p for p in json.load(sys.stdin) if p.get("type") == "perf_event" and re.fullmatch(sys.argv[1], p.get("name", ""))]
p = max(ps, key=lambda p: p["id"], default={})
print(p.get("run_time_ns", 0), p.get("run_cnt", 0))' "$1"
}

# start_profiler VARIANT: sets PROF_PID; the profiler runs SECS + 2 s at most.
start_profiler() {
	case $1 in
	none) PROF_PID= ;;
	profd19 | profd99)
		"$PROFD" record --seconds $((SECS + 2)) --frequency ${1#profd} -o $WORK/p.pb.gz \
			2>$WORK/prof.err &
		PROF_PID=$!
		until grep -q profiling $WORK/prof.err; do sleep 0.1; done ;;
	perf)
		perf record -F 99 -g -a -o $WORK/perf.data -- sleep $((SECS + 2)) >/dev/null 2>&1 &
		PROF_PID=$!
		sleep 1 ;;
	bpftrace)
		bpftrace -e 'profile:hz:99 { @[ustack, kstack] = count(); }' >/dev/null 2>&1 &
		PROF_PID=$!
		until bpftool prog show -j | grep -q '"name":"99"'; do sleep 0.1; done ;;
	esac
}

run_one() { # WORKLOAD VARIANT ROUND
	local w=$1 v=$2 r=$3 tput wcpu pcpu=0 bns=0 bcnt=0 b0 b1
	start_profiler $v
	local p0=0
	[ -n "$PROF_PID" ] && p0=$(ticks $PROF_PID)
	b0=$(busy_ns)
	if [ $w = cpu ]; then
		"$BUILD/tests/inline_target" $SECS >$WORK/w1 & local a=$!
		"$BUILD/tests/inline_target" $SECS >$WORK/w2 & local b=$!
		wait $a $b
		tput=$(cat $WORK/w1 $WORK/w2 | awk '{s += $2} END {print s / '$SECS'}')
	else
		pgbench_run -S -c 2 -j 2 -T $SECS
		tput=$(awk '/^tps/ {print $3; exit}' $WORK/pgbench.out)
	fi
	b1=$(busy_ns)
	if [ -n "$PROF_PID" ]; then
		case $v in
		profd*) read -r bns bcnt < <(prog_ns profd_sample) ;;
		bpftrace) read -r bns bcnt < <(prog_ns 99) ;;
		esac
		pcpu=$(( $(ticks $PROF_PID) - p0 ))
		if [ $v = bpftrace ]; then stop_bpftrace $PROF_PID; fi
		wait $PROF_PID 2>/dev/null || true
	fi
	# The workload's CPU: everything busy during the run but the profiler.
	wcpu=$(( b1 - b0 - pcpu ))
	echo "{\"workload\": \"$w\", \"variant\": \"$v\", \"round\": $r, \"throughput\": $tput," \
	     "\"workload_cpu_ns\": $wcpu, \"profiler_cpu_ns\": $pcpu, \"bpf_run_ns\": $bns, \"bpf_runs\": $bcnt}"
	echo "$w $v round $r: throughput $tput" >&2
}

for r in $(seq $ROUNDS); do
	for w in cpu pgbench; do
		for v in none profd19 profd99 perf bpftrace; do
			run_one $w $v $r
		done
	done
done
