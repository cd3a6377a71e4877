#!/bin/bash
# What heap tracking costs.  Run as root: bash bench/heap_cost.sh
#  1. ns per malloc+free pair (build/tests/mallocbench): no probes; profd
#     --heap at several sampling intervals; and, for reference, bpftrace
#     with an empty uprobe on malloc's first instruction (emulated: the
#     floor of any uprobe), an empty uretprobe on malloc, and an empty uprobe
#     on free's first instruction (which the kernel single-steps).
#  2. pgbench -S TPS without and with `profd record --heap --exe postgres`,
#     interleaved.
#  Both with uprobe sessions (6.12+ with BTF) and with the uprobe + uretprobe
#  pairs older kernels get (PROFD_HEAP_PROBES=uprobe), the *_uprobe rows.
#  3. kernel memory per entry of the live-allocation map.
# Rounds interleave the variants; medians are printed as key=value lines.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3} SECS=${SECS:-2} PGSECS=${PGSECS:-10}
LIBC=$(ldd build/tests/mallocbench | awk '/libc.so/ {print $3}')
export BUILD=$PWD/build TESTS=$PWD/tests
. tests/lib/common.sh
declare -A res

bench_pair() { # LABEL [profd args...]
	local label=$1 w out
	shift
	PAUSE=1 build/tests/mallocbench $SECS >$WORK/mb.out &
	w=$!
	for _ in $(seq 50); do grep -q ready $WORK/mb.out && break; sleep 0.05; done
	if [ "$label" = none ]; then
		:
	elif [ "$label" = bt_uretprobe ]; then
		bpftrace -e "uretprobe:$LIBC:malloc { }" >/dev/null 2>&1 & RECORD_PID=$!; sleep 3
	elif [ "$label" = bt_malloc_entry ]; then
		bpftrace -e "uprobe:$LIBC:malloc { }" >/dev/null 2>&1 & RECORD_PID=$!; sleep 3
	elif [ "$label" = bt_free_entry ]; then
		bpftrace -e "uprobe:$LIBC:free { }" >/dev/null 2>&1 & RECORD_PID=$!; sleep 3
	elif [[ $label == *_uprobe ]]; then
		PROFD_HEAP_PROBES=uprobe start_record --heap --pid $w --seconds $((SECS + 3)) "$@" \
			-o $WORK/h.pb.gz
	else
		start_record --heap --pid $w --seconds $((SECS + 3)) "$@" -o $WORK/h.pb.gz
	fi
	kill -USR1 $w
	wait $w
	if [[ $label == bt_* ]]; then
		# One SIGINT is lost if bpftrace is still attaching (a loaded machine):
		# this hung t_bench_quick under make test LOAD=2.
		stop_bpftrace $RECORD_PID
	elif [ "$label" != none ]; then
		kill -INT $RECORD_PID 2>/dev/null || true
		wait $RECORD_PID 2>/dev/null || true
	fi
	out=$(awk '/ns_per_pair/ {print $2}' $WORK/mb.out)
	res[$label]="${res[$label]:-} $out"
	echo "pair $label: $out ns" >&2
}

for r in $(seq $ROUNDS); do
	bench_pair none
	bench_pair heap_512k --heap-sample-bytes 524288
	bench_pair heap_64k --heap-sample-bytes 65536
	bench_pair heap_2m --heap-sample-bytes 2097152
	bench_pair heap_512k_uprobe --heap-sample-bytes 524288
	if command -v bpftrace >/dev/null; then
		bench_pair bt_malloc_entry
		bench_pair bt_uretprobe
		bench_pair bt_free_entry
	fi
done

. tests/lib/postgres.sh
tps() { awk '/^tps/ {print $3; exit}' $WORK/pgbench.out; }
for r in $(seq $ROUNDS); do
	pgbench_run -S -c 2 -T $PGSECS
	res[pg_none]="${res[pg_none]:-} $(tps)"
	echo "pgbench none: $(tps)" >&2
	start_record --heap --exe postgres --seconds $((PGSECS + 2)) -o $WORK/pg.pb.gz
	pgbench_run -S -c 2 -T $PGSECS
	res[pg_heap]="${res[pg_heap]:-} $(tps)"
	echo "pgbench heap: $(tps)" >&2
	wait $RECORD_PID
	PROFD_HEAP_PROBES=uprobe start_record --heap --exe postgres --seconds $((PGSECS + 2)) \
		-o $WORK/pg.pb.gz
	pgbench_run -S -c 2 -T $PGSECS
	res[pg_heap_uprobe]="${res[pg_heap_uprobe]:-} $(tps)"
	echo "pgbench heap (uprobe + uretprobe): $(tps)" >&2
	wait $RECORD_PID
done

# Live map: memlock bytes / max_entries, from a running tracker.
start_record --heap --pid $$ --seconds 3 -o $WORK/x.pb.gz
sleep 1
live=$(bpftool map show -j | python3 -c '
import json, sys
m = max((m for m in json.load(sys.stdin) if m.get("name") == "heap_live" and m["max_entries"] > 1),
        key=lambda m: m["id"])
print(round(m["bytes_memlock"] / m["max_entries"]), m["max_entries"])')
wait $RECORD_PID

for k in "${!res[@]}"; do
	echo "$k ${res[$k]}"
done | python3 -c '
import statistics, sys
rows = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in sys.stdin}
med = {k: statistics.median(v) for k, v in rows.items()}
for k in sorted(rows):
    runs = ",".join("%.1f" % x for x in rows[k])
    print(f"{k}_median={med[k]:.1f} {k}_runs={runs}")
base = med["none"]
for k in ("heap_512k", "heap_64k", "heap_2m", "heap_512k_uprobe", "bt_malloc_entry",
          "bt_uretprobe", "bt_free_entry"):
    if k in med:
        print(f"{k}_added_ns_per_pair={med[k] - base:.1f}")
for k, name in (("pg_heap", "pgbench_tps_ratio"), ("pg_heap_uprobe", "pgbench_uprobe_tps_ratio")):
    ratios = [h / n for h, n in zip(rows[k], rows["pg_none"])]
    print(f"{name}_median={statistics.median(ratios):.3f} {name}s=" + ",".join("%.3f" % x for x in ratios))
'
echo "live_map_bytes_per_entry=${live% *} live_map_entries=${live#* }"
