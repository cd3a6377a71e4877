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
# run over the same round's none) with their median; for the profiled
# variants the daemon's CPU over the pgbench run (its start excluded), in %
# of one CPU, and the share of blocked switches it kept stacks of, as
# record's last line counts them: what a changed keep rule moves, without
# the TPS's spread.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5} SECS=${SECS:-15}
WORKLOADS=${WORKLOADS:-tpcb select} VARIANTS=${VARIANTS:-none offcpu}
export BUILD=$PWD/build TESTS=$PWD/tests
. tests/lib/common.sh
need_root
. tests/lib/postgres.sh
PM=$(head -1 "$PGDATA/postmaster.pid")

# The daemon's user + system CPU ticks so far.
ticks() { local s; read -r -a s <"/proc/$1/stat"; echo $((s[13] + s[14])); }

# run WORKLOAD VARIANT: one pgbench run's TPS on stdout, then (profiled
# variants) the daemon's ticks over it, its stacks kept and the switches.
run() {
	local args rec= t0 t1 kept
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
		t0=$(ticks $RECORD_PID)
	fi
	# shellcheck disable=SC2086
	pgbench_run $args -T "$SECS"
	if [ -n "$rec" ]; then
		t1=$(ticks $RECORD_PID)
		stop_record
		# "wrote F: K stacks kept of N blocked switches in T s, L lost"
		kept=$(sed -n 's/.* \([0-9]*\) stacks kept of \([0-9]*\) .*/\1 \2/p' "$WORK/record.err" | tail -1)
	fi
	echo "$(awk '/^tps/ { print $3; exit }' "$WORK/pgbench.out") $((${t1:-0} - ${t0:-0})) ${kept:-0 0}"
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
			read -r tps ticks kept switches <<<"$(run "$w" "$v")"
			echo "round $r $w $v: $tps tps, daemon $ticks ticks, kept $kept of $switches" \
				"(load $(cut -d' ' -f1 /proc/loadavg))" >&2
			echo "$r $w $v $tps $ticks $kept $switches" >>"$WORK/runs"
		done
	done
done
python3 - "$WORK/runs" "$SECS" "$(getconf CLK_TCK)" <<'PY'
import statistics, sys
from collections import defaultdict
tps, cpu, kept = defaultdict(dict), defaultdict(dict), defaultdict(dict)
secs, hz = float(sys.argv[2]), float(sys.argv[3])
for line in open(sys.argv[1]):
    r, w, v, t, ticks, k, n = line.split()
    tps[(w, v)][int(r)] = float(t)
    if v != "none":
        cpu[(w, v)][int(r)] = 100.0 * int(ticks) / hz / secs
        kept[(w, v)][int(r)] = int(k) / int(n) if int(n) else 0.0
for (w, v), runs in sorted(tps.items()):
    rounds = sorted(runs)
    print(f"offcpu_tps_{w}_{v}_median={statistics.median(runs.values()):.0f} "
          f"offcpu_tps_{w}_{v}_runs=" + ",".join(f"{runs[r]:.0f}" for r in rounds))
    base = tps.get((w, "none"), {})
    if v != "none" and base:
        ratios = [runs[r] / base[r] for r in rounds if base.get(r)]
        print(f"offcpu_tps_{w}_{v}_ratio_median={statistics.median(ratios):.3f} "
              f"offcpu_tps_{w}_{v}_ratios=" + ",".join(f"{x:.3f}" for x in ratios))
    if v != "none":
        c, k = cpu[(w, v)], kept[(w, v)]
        print(f"offcpu_tps_{w}_{v}_daemon_cpu_pct_median={statistics.median(c.values()):.2f} "
              f"offcpu_tps_{w}_{v}_daemon_cpu_pcts=" + ",".join(f"{c[r]:.2f}" for r in rounds))
        print(f"offcpu_tps_{w}_{v}_kept_share_median={statistics.median(k.values()):.4f}")
PY
