#!/bin/bash
# A, the off-CPU program's cost for a switch of a thread that is no target
# (bench/offcpu_cost.sh's A), for two builds interleaved: each round runs
# both, in an order that turns every round.  Beside each run, bpftrace's
# `tracepoint:sched:sched_switch { }`, a program that does nothing, gives
# the floor: what entering any BPF program at this tracepoint costs here.
# Run as root: OLD=path/to/profd NEW=build/profd bash bench/offcpu_ab.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECS:-8} ROUNDS=${ROUNDS:-6}
OLD=${OLD:?OLD=path of the other profd} NEW=${NEW:-build/profd}
. tests/lib/common.sh
. bench/lib/bpf_stats.sh
bpf_stats_on

sleep 100000 &
IDLE=$!
for r in $(seq "$ROUNDS"); do
	order="$OLD $NEW"
	[ $((r % 2)) = 1 ] || order="$NEW $OLD"
	for bin in $order; do
		./build/tests/offcpu_target $((SECS + 10)) >/dev/null &
		w=$!
		"$bin" record --off-cpu --seconds "$SECS" --pid $IDLE -o "$WORK/p.pb.gz" 2>"$WORK/err" &
		p=$!
		bpftrace -e 'tracepoint:sched:sched_switch { }' >/dev/null 2>&1 &
		b=$!
		for _ in $(seq 300); do grep -q profiling "$WORK/err" 2>/dev/null && break; sleep 0.1; done
		sleep $((SECS - 1))
		read -r ns cnt _ _ _ _ < <(offcpu_stats_of $p)
		read -r bns bcnt < <(prog_stats sched_switch tracepoint)
		stop_bpftrace $b || true
		wait $p || true
		kill $w 2>/dev/null || true
		wait $w 2>/dev/null || true
		name=new
		[ "$bin" = "$NEW" ] || name=old
		echo "round $r: $name $((ns / (cnt + 1))) ns a non-target switch ($cnt runs)," \
			"empty program $((bns / (bcnt + 1))) ns"
	done
done
