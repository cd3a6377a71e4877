#!/bin/bash
# make bench: every benchmark, then bench/results.json and the summary table
# in docs/benchmarks.md (between the bench:summary markers; bench:stacks for stacks.sh).
# QUICK=1 (make bench QUICK=1): short runs, one round, results only under
# build/bench/ -- a smoke test of the scripts, asserting no figures.
# BENCH_ONLY="stacks heap ...": only those parts (overhead kernel_cost
# continuous heap kernel_cost_vm soak stacks compute kernel_pieces offcpu
# syscalls heap_preload); the others keep
# their figures.
# PROFD: the binary stacks.sh and overhead.sh run (default build/profd).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "make bench needs root (BPF, perf, uprobes)" >&2; exit 1; }
OUT=build/bench
mkdir -p $OUT
if [ -n "${QUICK:-}" ]; then
	O_ROUNDS=1 O_SECS=3 C_SCRAPES=1 C_SECS=3 K_SECS=3 K_ROUNDS=1 H_ROUNDS=1 H_SECS=1 H_PG=2
else
	O_ROUNDS=3 O_SECS=15 C_SCRAPES=10 C_SECS=59 K_SECS=10 K_ROUNDS=3 H_ROUNDS=3 H_SECS=2 H_PG=10
fi
for tool in perf bpftrace; do
	command -v $tool >/dev/null || { echo "make bench needs $tool (scripts/deps.sh --bench)" >&2; exit 1; }
done

ONLY=" ${BENCH_ONLY:-overhead kernel_cost continuous heap kernel_cost_vm soak stacks compute kernel_pieces offcpu syscalls heap_preload} "
ONLY=${ONLY//,/ }
RAN=()
want() { # PART: whether to run it (and note that it ran)
	case $ONLY in *" $1 "*) RAN+=("$1") ;; *) return 1 ;; esac
}

if want overhead; then
	echo "== overhead: none / profd 19 Hz / profd 99 Hz / perf / bpftrace, CPU-bound and pgbench -S" >&2
	ROUNDS=$O_ROUNDS SECS=$O_SECS bash bench/overhead.sh >$OUT/overhead.jsonl
fi
if want kernel_cost; then
	echo "== kernel time per sample at 999 Hz, profd and bpftrace" >&2
	SECS=$K_SECS ROUNDS=$K_ROUNDS OUT=$OUT/kernel_cost.txt bash bench/kernel_cost.sh
fi
if want continuous; then
	echo "== continuous profiling of postgres: $C_SCRAPES scrapes of $C_SECS s at 19 Hz" >&2
	SCRAPES=$C_SCRAPES SECS=$C_SECS bash bench/continuous.sh >$OUT/continuous.json
fi
if want heap; then
	echo "== heap tracking" >&2
	ROUNDS=$H_ROUNDS SECS=$H_SECS PGSECS=$H_PG bash bench/heap_cost.sh >$OUT/heap.txt
fi
# Booting the test kernels is the slow part: the full run only.
if [ -z "${QUICK:-}" ] && want kernel_cost_vm; then
	echo "== kernel time per sample interpreted and with the JIT (tests/vm kernels)" >&2
	SECS=10 ROUNDS=3 bash bench/kernel_cost_vm.sh >$OUT/kernel_cost_vm.txt
fi
if want soak; then
	echo "== soak: whole-system scrapes with process churn, then a fork storm" >&2
	if [ -n "${QUICK:-}" ]; then
		SOAK_SECS=20 SCRAPE_SECS=5 STORM=200 bash bench/soak.sh >$OUT/soak.json
	else
		SOAK_SECS=600 SCRAPE_SECS=10 STORM=5000 bash bench/soak.sh >$OUT/soak.json
	fi
fi
if want stacks; then
	echo "== complete stacks: profd and perf --call-graph dwarf on the same workloads" >&2
	OUT=$OUT/stacks bash bench/stacks.sh
fi
if want compute; then
	echo "== a compute VM simulated: the always-on daemon, quiet and under connection churn" >&2
	if [ -n "${QUICK:-}" ]; then
		ROUNDS=1 SCRAPES=1 SECS=3 FORKS=200 EXECS=200 bash bench/compute_sim.sh >$OUT/compute.jsonl
	else
		ROUNDS=3 SCRAPES=3 SECS=20 bash bench/compute_sim.sh >$OUT/compute.jsonl
	fi
fi
if want kernel_pieces; then
	echo "== kernel time per sample, piece by piece, beside bpftrace" >&2
	if [ -n "${QUICK:-}" ]; then
		ROUNDS=1 SECS=4 W=inline_target bash bench/kernel_pieces.sh >$OUT/kernel_pieces.jsonl
	else
		ROUNDS=5 SECS=5 bash bench/kernel_pieces.sh >$OUT/kernel_pieces.jsonl
	fi
fi

if want offcpu; then
	echo "== off-CPU and wall-clock profiles: kernel time per switch, pgbench TPS with and without" >&2
	if [ -n "${QUICK:-}" ]; then
		SECS=4 ROUNDS=1 OUT=$OUT/offcpu_cost.txt bash bench/offcpu_cost.sh
		ROUNDS=1 SECS=3 bash bench/offcpu_tps.sh >$OUT/offcpu_tps.txt
	else
		SECS=8 ROUNDS=3 OUT=$OUT/offcpu_cost.txt bash bench/offcpu_cost.sh
		ROUNDS=5 SECS=15 bash bench/offcpu_tps.sh >$OUT/offcpu_tps.txt
	fi
fi
if want syscalls; then
	echo "== what profd costs the syscalls of processes it does not profile, by exit hook" >&2
	ROUNDS=${QUICK:+1} bash bench/syscall_cost.sh >$OUT/syscall_cost.txt
fi
if want heap_preload; then
	echo "== the sampled heap mode (libprofd_heap.so): pgbench -S TPS with and without, 2 MiB mean" >&2
	if [ -n "${QUICK:-}" ]; then
		MEAN=2097152 ROUNDS=1 SECS=3 VARIANTS="none preload" bash bench/heap_preload.sh >$OUT/heap_preload.txt
	else
		MEAN=2097152 ROUNDS=20 SECS=10 VARIANTS="none preload" bash bench/heap_preload.sh >$OUT/heap_preload.txt
	fi
fi

[ ${#RAN[@]} -gt 0 ] || { echo "BENCH_ONLY=${BENCH_ONLY:-}: nothing to run" >&2; exit 1; }
# BENCH_COMMIT: the commit the profd measured was built from, when not HEAD.
python3 bench/report.py $OUT "${BENCH_COMMIT:-$(git rev-parse --short HEAD)}" ${QUICK:+--quick} --only "$(IFS=,; echo "${RAN[*]}")"
