#!/bin/bash
# What the sampled heap mode costs postgres (issue 26, item 2).  Run as root:
#   bash bench/heap_preload.sh
# Debian's PostgreSQL 15 under `pgbench -S -c 2 -T SECS` (select-only, the
# allocation-heaviest per unit of work), in interleaved rounds of:
#   none      postgres alone, no daemon
#   preload   postgres with LD_PRELOAD=build/libprofd_heap.so and
#             `profd serve --heap --exe postgres` (the sampled mode)
#   probes    postgres alone and `profd serve --heap --exe postgres` (the
#             allocator probes, in postgres's memory only)
#   bare      postgres with the preload and no daemon (the library's own
#             cost: no probe anywhere)
# VARIANTS picks some ("none preload probes" by default), whose order turns
# round by round; MEAN sets the sampling mean, the daemon's and the
# library's (default 524288).  PIN=1 runs postgres on CPU 0 and pgbench on
# CPU 1: on this 2-vCPU VM where the scheduler puts the three processes
# moves a round's TPS by +-20%, more than what is measured; pinned, what
# the mode costs the backends is what slows them (the daemon, ~0.1% of a
# CPU, runs where there is room).  KEEP=1 starts postgres once, with the
# preload, for VARIANTS among "bare daemon preload": each round's runs
# differ by the daemon alone, without a restart between them (a restart
# moves a round's TPS by as much as what is measured), and the ratios are
# to bare.  daemon: `profd serve --exe postgres`, no --heap (what the
# always-on CPU profiler costs, beside what heap tracking adds).
# Output: key=value lines, TPS medians and ratios to none.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5} SECS=${SECS:-10}
export BUILD=$PWD/build TESTS=$PWD/tests
. tests/lib/common.sh
. tests/lib/serve.sh
PGBIN=/usr/lib/postgresql/15/bin
PGDATA=$WORK/pgdata PGPORT=$((20000 + RANDOM % 20000))
cp build/libprofd_heap.so "$WORK/"
chmod 0755 "$WORK" "$WORK/libprofd_heap.so"
mkdir -p "$PGDATA" && chown postgres: "$PGDATA" "$WORK"
as_pg() { runuser -u postgres -- "$@"; }
PIN0= PIN1=
[ -n "${PIN:-}" ] && PIN0="taskset -c 0" PIN1="taskset -c 1"
as_pg $PGBIN/initdb -D "$PGDATA" -A trust >/dev/null
pg() { # start|stop [ENV...]
	local what=$1
	shift
	if [ "$what" = start ]; then
		as_pg env "$@" $PIN0 $PGBIN/pg_ctl -D "$PGDATA" -l "$WORK/pg.log" -w \
			-o "-p $PGPORT -k $WORK -c listen_addresses=''" start >/dev/null
	else
		as_pg $PGBIN/pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
	fi
}
trap 'pg stop 2>/dev/null || true; cleanup_common' EXIT
pg start
as_pg $PGBIN/pgbench -h "$WORK" -p $PGPORT -i -s 1 postgres >/dev/null 2>&1
pg stop
[ -n "${KEEP:-}" ] && pg start LD_PRELOAD=$WORK/libprofd_heap.so PROFD_HEAP_SAMPLE_BYTES=${MEAN:-524288}
read -ra VS <<<"${VARIANTS:-none preload probes}"
declare -A res cpu
CLK_TCK=$(getconf CLK_TCK)
# busy_ticks: CPU ticks spent not idle, all CPUs (/proc/stat).
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
for r in $(seq "$ROUNDS"); do
	for i in "${!VS[@]}"; do
		v=${VS[$(((r + i) % ${#VS[@]}))]}
		case ${KEEP:+keep}$v in
		keep*) ;;
		preload | bare) pg start LD_PRELOAD=$WORK/libprofd_heap.so \
			PROFD_HEAP_SAMPLE_BYTES=${MEAN:-524288} ;;
		*) pg start ;;
		esac
		case $v in
		none | bare) ;;
		daemon) serve "$(free_port 17660)" --exe postgres ;;
		*) serve "$(free_port 17660)" --heap --exe postgres --heap-sample-bytes "${MEAN:-524288}" ;;
		esac
		b0=$(busy_ticks)
		as_pg $PIN1 $PGBIN/pgbench -h "$WORK" -p $PGPORT -S -c 2 -T "$SECS" postgres \
			>"$WORK/pgbench.out" 2>/dev/null
		b1=$(busy_ticks)
		tps=$(awk '/^tps/ { print $3; exit }' "$WORK/pgbench.out")
		ntx=$(awk '/actually processed/ { print $NF; exit }' "$WORK/pgbench.out")
		# CPU time (ns), all CPUs, every process and the kernel, per transaction.
		cpu[$v]="${cpu[$v]:-} $(((b1 - b0) * 1000000000 / CLK_TCK / ntx))"
		if [ $v != none ] && [ $v != bare ]; then
			grep -q "sampled in the process" "$WORK/serve.err" || [ $v != preload ] ||
				fail "the preload was not taken"
			kill "$SERVE_PID"
			wait "$SERVE_PID" 2>/dev/null || true
		fi
		[ -n "${KEEP:-}" ] || pg stop
		res[$v]="${res[$v]:-} $tps"
		echo "round $r $v: $tps tps" >&2
	done
done
for v in "${!cpu[@]}"; do echo "$v ${cpu[$v]}"; done >"$WORK/cpu"
for v in "${!res[@]}"; do echo "$v ${res[$v]}"; done | CPU=$WORK/cpu python3 -c '
import statistics, sys
res = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in sys.stdin}
base = "none" if "none" in res else "bare"
for v, runs in sorted(res.items()):
    print(f"tps_{v}_median={statistics.median(runs):.0f} tps_{v}_runs=" + ",".join(f"{x:.0f}" for x in runs))
    if v != base and base in res:
        r = [a / b for a, b in zip(runs, res[base])]
        print(f"{v}_ratio_median={statistics.median(r):.3f} {v}_ratios=" + ",".join(f"{x:.3f}" for x in r))
# CPU per transaction (ns, all CPUs): steadier than TPS, which moves with
# where the scheduler puts the three processes; a ratio above 1 is a cost.
import os
cpu = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in open(os.environ["CPU"])}
for v, runs in sorted(cpu.items()):
    print(f"cpu_ns_per_tx_{v}_median={statistics.median(runs):.1f} cpu_ns_per_tx_{v}_runs=" + ",".join(f"{x:.0f}" for x in runs))
    if v != base and base in cpu:
        r = [a / b for a, b in zip(runs, cpu[base])]
        print(f"{v}_cpu_ratio_median={statistics.median(r):.3f} {v}_cpu_ratios=" + ",".join(f"{x:.3f}" for x in r))
'

