#!/bin/bash
# What each way of handing a sample from a perf_event program to user space
# costs, alone: bench/ring_cost/ring_cost.bpf.c, one variant at a time,
# whole system at FREQ Hz beside two busy inline_targets, kernel.bpf_stats'
# run_time_ns / run_cnt over SECS s, the variants shuffled in each of ROUNDS
# rounds; SIZE bytes a record (256; SIZE=4096 for a sample with a stack
# copy, where the two _big variants compare the shared ring and the CPU's).  Prints the medians.  Why profd's small samples go to a ring per
# CPU rather than the BPF ring buffer (docs/benchmarks.md).  Run as root,
# after make.
set -euo pipefail
cd "$(dirname "$0")/.."
FREQ=${FREQ:-999} SECS=${SECS:-4} ROUNDS=${ROUNDS:-5} SIZE=${SIZE:-256}
export SIZE
. tests/lib/common.sh
. bench/lib/bpf_stats.sh
bpf_stats_on
MULTIARCH=$(gcc -print-multiarch)
case $(uname -m) in x86_64) ARCH=x86 ;; aarch64) ARCH=arm64 ;; *) ARCH=$(uname -m) ;; esac
clang -g -O2 -target bpf -D__TARGET_ARCH_$ARCH -idirafter /usr/include/$MULTIARCH \
	-c bench/ring_cost/ring_cost.bpf.c -o $WORK/ring_cost.bpf.o
bpftool gen skeleton $WORK/ring_cost.bpf.o name ring_cost_bpf > $WORK/ring_cost.skel.h
gcc -O2 -I$WORK bench/ring_cost/ring_cost.c -o $WORK/ring_cost -lbpf

names=(empty scratch ringbuf_output ringbuf_query+output ringbuf_reserve perf_event_output cpu_ring
       ringbuf_big cpu_ring_big ringbuf_big_wake)
./build/tests/inline_target $((ROUNDS * 10 * (SECS + 2))) >/dev/null &
./build/tests/inline_target $((ROUNDS * 10 * (SECS + 2))) >/dev/null &
for r in $(seq "$ROUNDS"); do
	for v in $(shuf -e "${!names[@]}"); do
		$WORK/ring_cost "$v" "$FREQ" "$SECS"
	done
done > $WORK/runs
python3 - "$WORK/runs" "${names[@]}" <<'PY'
import statistics, sys
runs, names = {}, sys.argv[2:]
for line in open(sys.argv[1]):
    v, ns, _ = line.split()
    runs.setdefault(int(v), []).append(int(ns))
floor = statistics.median(runs[0])
print(f"{'variant':24} {'median ns':>10} {'above empty':>12}  rounds")
for v, name in enumerate(names):
    m = statistics.median(runs[v])
    print(f"{name:24} {m:10.0f} {m - floor:12.0f}  {' '.join(map(str, runs[v]))}")
PY
