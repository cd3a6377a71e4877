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
# JIT figure (bench/report.py does).  Run as root: bash bench/kernel_cost_vm.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECS:-10} ROUNDS=${ROUNDS:-3}
guest='
set -e
sysctl -qw kernel.bpf_stats_enabled=1
build/tests/inline_target 900 >/dev/null & a=$!
build/tests/inline_target 900 >/dev/null & b=$!
modes=0
[ -w /proc/sys/net/core/bpf_jit_enable ] && modes="1 0"
for r in $(seq '$ROUNDS'); do
	for jit in $modes; do
		[ $jit = 0 ] && [ ! -e /proc/sys/net/core/bpf_jit_enable ] ||
			sysctl -qw net.core.bpf_jit_enable=$jit
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
rows=$(mktemp) errs=$(mktemp)
trap 'rm -f $rows $errs' EXIT
# The figures are named after the accelerator that ran them (run.sh says
# which): an emulated CPU's (tcg) are not a virtualized one's (kvm).
accel=""
for k in debian-6.1 compute-6.12; do
	tests/vm/run.sh --kernel "$k" --timeout 1200 -- bash -c "$guest" 2>$errs | awk -v k=$k '
		$1 == "round" { printf "%s jit %d: %.0f ns/sample (%d samples)\n", k, $4, $2 / $3, $3 > "/dev/stderr"
				print k "_" ($4 ? "jit" : "interp"), $2 / $3 }' >>$rows
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
print(" ".join(out))
PY
