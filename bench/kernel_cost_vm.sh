#!/bin/bash
# Kernel time per sample interpreted and with the JIT, on the kernels of
# tests/vm, measured the same way as bench/kernel_cost.sh:
# kernel.bpf_stats_enabled, run_time_ns / run_cnt of profd_sample at 999 Hz
# over the whole system, two busy processes.  Debian's 6.1 can switch its
# JIT off (net.core.bpf_jit_enable=0), so it measures both on one kernel,
# rounds interleaved; compute-6.12 has no JIT at all.  The guests run under
# TCG when KVM is unusable (tests/vm/run.sh proves it), which emulates every instruction: absolute
# figures are then an emulated CPU's, and what carries to real hardware is
# the ratio of interpreted to JIT, applied to bench/kernel_cost.sh's native
# JIT figure (bench/report.py does).  Then, in a guest of one CPU, the
# off-CPU program the same way (bench/offcpu_cost.sh's A and B): a switch
# of no target (an off-CPU profile of an idle sleep while offcpu_target
# switches), and a kept target switch (every switch of offcpu_target
# kept), whole and without its kernel stack (PROFD_BENCH_CUT=5): the
# kernel's unwinder is ORC on Debian's kernel, frame pointers on the
# compute kernel (tests/vm/compute-6.12.config).  One CPU: under TCG, detaching the sched_switch program while the
# other CPU runs it interpreted at every switch, its interrupts off, can
# starve the patching of the tracepoint's call site into a soft lockup
# of Debian's 6.1 (seen here); that is the emulator's speed, not the
# program's.  Run as root: bash bench/kernel_cost_vm.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECS:-10} ROUNDS=${ROUNDS:-3}
# A round of the off-CPU guest takes ~5 min under TCG (each profd start
# loads and verifies its programs emulated), and emulation varies little
# from round to round: one, unless asked.
OFF_ROUNDS=${OFF_ROUNDS:-1}
# Both guests begin so: the JIT modes to run in turn (on and off where the
# kernel has a JIT; compute-6.12 has none, so only 0) and jit_set MODE.
prelude='
set -e
sysctl -qw kernel.bpf_stats_enabled=1
modes=0
[ -w /proc/sys/net/core/bpf_jit_enable ] && modes="1 0"
jit_set() {
	[ $1 = 0 ] && [ ! -e /proc/sys/net/core/bpf_jit_enable ] ||
		sysctl -qw net.core.bpf_jit_enable=$1
}
'
guest=$prelude'
build/tests/inline_target 900 >/dev/null & a=$!
build/tests/inline_target 900 >/dev/null & b=$!
for r in $(seq '$ROUNDS'); do
	for jit in $modes; do
		jit_set $jit
		# Loading takes seconds under TCG: measure a window once the
		# program runs, then end the recording.
		build/profd record --seconds 600 --frequency 999 -o /tmp/p.pb.gz 2>/dev/null &
		p=$!
		stat() {
			bpftool prog show -j | python3 -c "
import json, sys
ps = [p for p in json.load(sys.stdin) if p.get(\"name\") == \"profd_sample\" and p.get(\"run_cnt\", 0) > 0]
p = max(ps, key=lambda p: p[\"id\"]) if ps else {}
print(p.get(\"run_time_ns\", 0), p.get(\"run_cnt\", 0), int(p.get(\"jited\", False)))"
		}
		for i in $(seq 240); do
			set -- $(stat)
			[ "$2" -gt 0 ] && break
			sleep 0.5
		done
		sleep 1
		set -- $(stat)
		t0=$1 c0=$2
		sleep '$SECS'
		set -- $(stat)
		echo round $(($1 - t0)) $(($2 - c0)) $3
		kill -INT $p
		wait $p || true
	done
done
kill $a $b
'
guest_off=$prelude'
. bench/lib/bpf_stats.sh
sleep 100000 & idle=$!
# offcpu CUT ARGS...: "run_time_ns run_cnt target_switches" of the off-CPU
# program of `profd record --off-cpu ARGS` over SECS, once it runs, cut
# as PROFD_BENCH_CUT=CUT says (0: whole).
offcpu() {
	local cut=$1
	shift
	PROFD_BENCH_CUT=$cut build/profd record --off-cpu --seconds 600 "$@" -o /tmp/o.pb.gz 2>/dev/null &
	local p=$! i
	for i in $(seq 240); do
		set -- $(offcpu_stats_of $p)
		[ "$2" -gt 0 ] && break
		sleep 0.5
	done
	sleep 1
	set -- $(offcpu_stats_of $p)
	local t0=$1 c0=$2 s0=$3
	sleep '$SECS'
	set -- $(offcpu_stats_of $p)
	echo $(($1 - t0)) $(($2 - c0)) $(($3 - s0))
	kill -INT $p
	wait $p || true
}
for r in $(seq '$OFF_ROUNDS'); do
	for jit in $modes; do
		jit_set $jit
		build/tests/offcpu_target 590 >/dev/null & w=$!
		echo offcpu $(offcpu 0 --pid $idle) \
			$(offcpu 0 --off-cpu-period-us 10 --exe offcpu_target) \
			$(offcpu 5 --off-cpu-period-us 10 --exe offcpu_target) $jit
		kill $w
		wait $w || true
	done
done
kill $idle
'
rows=$(mktemp) errs=$(mktemp)
trap 'rm -f $rows $errs' EXIT
# The figures are named after the accelerator that ran them (run.sh says
# which): an emulated CPU's (tcg) are not a virtualized one's (kvm).
accel=""
for k in debian-6.1 compute-6.12; do
	tests/vm/run.sh --kernel "$k" --timeout 1200 -- bash -c "$guest" 2>$errs | awk -v k=$k '
		$1 == "round" { printf "%s jit %d: %.0f ns/sample (%d samples)\n", k, $4, $2 / $3, $3 > "/dev/stderr"
				print k "_" ($4 ? "jit" : "interp"), $2 / $3 }' >>$rows
	tests/vm/run.sh --kernel "$k" --smp 1 --timeout 2400 -- bash -c "$guest_off" 2>>$errs | awk -v k=$k '
		# offcpu A_time A_runs A_switches B_time B_runs B_switches
		# B5_time B5_runs B5_switches jit: per kept target switch, as
		# bench/offcpu_cost.sh computes B; B5, all but the kernel stack.
		$1 == "offcpu" && $3 > 0 && $7 > 0 && $10 > 0 {
			a = $2 / $3
			b = ($5 - ($6 - 2 * $7) * a) / $7
			b5 = ($8 - ($9 - 2 * $10) * a) / $10
			m = $11 ? "jit" : "interp"
			printf "%s jit %d: off-CPU, %.0f ns a switch of no target, %.0f ns a kept target switch (%d), %.0f ns without its kernel stack (%d)\n",
				k, $11, a, b, $7, b5, $10 > "/dev/stderr"
			print k "_offcpu_nontarget_" m, a
			print k "_offcpu_kept_" m, b
			print k "_offcpu_kstack_" m, b - b5 }' >>$rows
	cat $errs >&2
	a=$(sed -n 's/^run.sh: accelerator \([a-z]*\).*/\1/p' $errs | head -1)
	[ -z "$accel" ] || [ "$accel" = "$a" ] || a=mixed
	accel=$a
done
echo "kernel_cost_vm: guests ran under ${accel:-?}" >&2
ACCEL=${accel:-tcg} python3 - $rows <<'PY'
import os, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    k, ns = line.split()
    rows.setdefault(k.replace("-", "").replace(".", ""), []).append(float(ns))
med = {k: statistics.median(v) for k, v in rows.items()}
acc = os.environ["ACCEL"]
out = [f"{k}_{acc}_ns={v:.0f}" for k, v in sorted(med.items())]
out.append(f"accel_kvm={int(acc == 'kvm')}")
if "debian61_jit" in med and "debian61_interp" in med:
    out.append(f"interpreted_over_jit={med['debian61_interp'] / med['debian61_jit']:.2f}")
if "debian61_offcpu_kept_jit" in med and "debian61_offcpu_kept_interp" in med:
    out.append("offcpu_kept_interpreted_over_jit="
               f"{med['debian61_offcpu_kept_interp'] / med['debian61_offcpu_kept_jit']:.2f}")
print(" ".join(out))
PY
