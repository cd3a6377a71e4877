#!/bin/bash
# What off-CPU profiling costs postgres (issue 24: pgbench TPS with an
# off-CPU profile of postgres at the default sampling >= 0.98x without).
# Run as root:
#   bash bench/offcpu_tps.sh
# Debian's PostgreSQL 15 (scale 1, one server for all rounds) under two
# pgbench workloads, each SECS seconds a run:
#   tpcb     the default TPC-B-like script, -c 8 -j 2: the waits of the
#            issue (Lock:transactionid on the one branch row, WAL fsyncs,
#            ClientRead), the most target switches per second;
#   select   -S -c 2: a ClientRead switch per query, the most switches per
#            unit of work;
# in interleaved rounds of VARIANTS (default "none offcpu"; the order turns
# round by round, so a drift of the machine falls on both alike):
#   none     postgres alone;
#   offcpu   `profd record --off-cpu --pid POSTMASTER` at the default
#            period (10 ms), started before the run, its backends forked
#            while it runs, as a user profiles a server;
#   wall     `profd record --wall`, the same targets (99 Hz on CPU, and the
#            off-CPU program with preempted switches too).
# The daemon's start (loading and verifying the BPF object) is kept out of
# the measured window: pgbench starts once record says "profiling" and a
# connection has been made.  Output: key=value lines, per workload and
# variant: TPS median and runs, and the paired ratios to none (each round's
# run over the same round's none) with their median.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5} SECS=${SECS:-15}
WORKLOADS=${WORKLOADS:-tpcb select} VARIANTS=${VARIANTS:-none offcpu}
export BUILD=$PWD/build TESTS=$PWD/tests
. tests/lib/common.sh
need_root
. tests/lib/postgres.sh
PM=$(head -1 "$PGDATA/postmaster.pid")

# run WORKLOAD VARIANT: one pgbench run's TPS on stdout.
run() {
	local args rec=
	case $1 in
	tpcb) args="-c 8 -j 2" ;;
	select) args="-S -c 2" ;;
	*) fail "unknown workload $1" ;;
	esac
	case $2 in
	none) ;;
	offcpu) rec=--off-cpu ;;
	wall) rec=--wall ;;
	*) fail "unknown variant $2" ;;
	esac
	if [ -n "$rec" ]; then
		start_record --seconds $((SECS + 60)) --pid $PM $rec -o "$WORK/p.pb.gz"
		psql_pg -c 'select 1' >/dev/null
	fi
	# shellcheck disable=SC2086
	pgbench_run $args -T "$SECS"
	[ -z "$rec" ] || stop_record
	awk '/^tps/ { print $3; exit }' "$WORK/pgbench.out"
}

: >"$WORK/runs"
for r in $(seq "$ROUNDS"); do
	vs=($VARIANTS)
	# Every other round the other way round.
	if [ $((r % 2)) -eq 0 ]; then
		for ((i = 0, j = ${#vs[@]} - 1; i < j; i++, j--)); do
			t=${vs[i]} vs[i]=${vs[j]} vs[j]=$t
		done
	fi
	for w in $WORKLOADS; do
		for v in "${vs[@]}"; do
			tps=$(run "$w" "$v")
			echo "round $r $w $v: $tps tps (load $(cut -d' ' -f1 /proc/loadavg))" >&2
			echo "$r $w $v $tps" >>"$WORK/runs"
		done
	done
done
python3 - "$WORK/runs" <<'PY'
import statistics, sys
from collections import defaultdict
tps = defaultdict(dict)
for line in open(sys.argv[1]):
    r, w, v, t = line.split()
    tps[(w, v)][int(r)] = float(t)
for (w, v), runs in sorted(tps.items()):
    rounds = sorted(runs)
    print(f"offcpu_tps_{w}_{v}_median={statistics.median(runs.values()):.0f} "
          f"offcpu_tps_{w}_{v}_runs=" + ",".join(f"{runs[r]:.0f}" for r in rounds))
    base = tps.get((w, "none"), {})
    if v != "none" and base:
        ratios = [runs[r] / base[r] for r in rounds if base.get(r)]
        print(f"offcpu_tps_{w}_{v}_ratio_median={statistics.median(ratios):.3f} "
              f"offcpu_tps_{w}_{v}_ratios=" + ",".join(f"{x:.3f}" for x in ratios))
PY
