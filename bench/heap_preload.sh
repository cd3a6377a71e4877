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
# VARIANTS picks some ("none preload probes" by default); MEAN sets the
# sampling mean, the daemon's and the library's (default 524288).
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
as_pg $PGBIN/initdb -D "$PGDATA" -A trust >/dev/null
pg() { # start|stop [ENV...]
	local what=$1
	shift
	if [ "$what" = start ]; then
		as_pg env "$@" $PGBIN/pg_ctl -D "$PGDATA" -l "$WORK/pg.log" -w \
			-o "-p $PGPORT -k $WORK -c listen_addresses=''" start >/dev/null
	else
		as_pg $PGBIN/pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
	fi
}
trap 'pg stop 2>/dev/null || true; cleanup_common' EXIT
pg start
as_pg $PGBIN/pgbench -h "$WORK" -p $PGPORT -i -s 1 postgres >/dev/null 2>&1
pg stop
declare -A res
for r in $(seq "$ROUNDS"); do
	for v in ${VARIANTS:-none preload probes}; do
		case $v in
		preload | bare) pg start LD_PRELOAD=$WORK/libprofd_heap.so \
			PROFD_HEAP_SAMPLE_BYTES=${MEAN:-524288} ;;
		*) pg start ;;
		esac
		case $v in
		none | bare) ;;
		*) serve "$(free_port 17660)" --heap --exe postgres --heap-sample-bytes "${MEAN:-524288}" ;;
		esac
		tps=$(as_pg $PGBIN/pgbench -h "$WORK" -p $PGPORT -S -c 2 -T "$SECS" postgres 2>/dev/null |
			awk '/^tps/ { print $3; exit }')
		if [ $v = preload ] || [ $v = probes ]; then
			grep -q "sampled in the process" "$WORK/serve.err" || [ $v = probes ] ||
				fail "the preload was not taken"
			kill "$SERVE_PID"
			wait "$SERVE_PID" 2>/dev/null || true
		fi
		pg stop
		res[$v]="${res[$v]:-} $tps"
		echo "round $r $v: $tps tps" >&2
	done
done
for v in "${!res[@]}"; do echo "$v ${res[$v]}"; done | python3 -c '
import statistics, sys
res = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in sys.stdin}
for v, runs in sorted(res.items()):
    print(f"tps_{v}_median={statistics.median(runs):.0f} tps_{v}_runs=" + ",".join(f"{x:.0f}" for x in runs))
    if v != "none" and "none" in res:
        r = [a / b for a, b in zip(runs, res["none"])]
        print(f"{v}_ratio_median={statistics.median(r):.3f} {v}_ratios=" + ",".join(f"{x:.3f}" for x in r))
'

