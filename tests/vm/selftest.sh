#!/bin/bash
# Self-test of the VM harness: boots each kernel under tests/vm/run.sh and
# checks what the guest sees (release, CPUs, command line, BTF or not, BPF JIT
# off, tracepoint formats, perf cpu-clock sampling, the postgres user) and that
# the command's exit code comes back.  Exit 0 when all pass, 1 when one fails,
# 77 when it cannot run here (not root, no qemu).
#   tests/vm/selftest.sh [debian-6.1] [compute-6.12]   (default: both)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${PROFD_VM_CACHE:-/var/cache/profd-vm}
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(debian-6.1 compute-6.12)
[ "$(id -u)" -eq 0 ] || { echo "skip: tests/vm/selftest.sh needs root"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "skip: no qemu-system-x86_64"; exit 77; }

# A static perf_event_open helper, where the guest sees it (not /tmp: the
# guest's /tmp is its own tmpfs).
src=$HERE/perf_cpu_clock.c
helper=$CACHE/helpers/perf_cpu_clock-$(sha256sum "$src" | cut -c1-12)
if [ ! -x "$helper" ]; then
	mkdir -p "$CACHE/helpers"
	cc -O2 -static -Wall -o "$helper.tmp.$$" "$src" && mv "$helper.tmp.$$" "$helper" ||
		{ echo "FAIL: cannot build $src (static)"; exit 1; }
fi

# Runs in the guest; prints "ok: ..." / "FAIL: ..." lines, then exits 3.
guest='
want=$1 helper=$2
ok() { echo "ok: $want: $*"; }
no() { echo "FAIL: $want: $*"; }
r=$(uname -r)
case $want:$r in debian-6.1:6.1.*|compute-6.12:6.12.*) ok "uname -r $r" ;; *) no "uname -r $r" ;; esac
[ "$(nproc)" = 2 ] && ok "nproc 2" || no "nproc $(nproc), wanted 2"
grep -qw tsc=reliable /proc/cmdline && ok "cmdline: $(cat /proc/cmdline)" || no "cmdline $(cat /proc/cmdline)"
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
case $cs in tsc|tsc-early|kvm-clock) true ;; *) false ;; esac && ok "clocksource $cs" || no "clocksource $cs"
if [ $want = debian-6.1 ]; then
	[ -e /sys/kernel/btf/vmlinux ] && ok "BTF present" || no "no /sys/kernel/btf/vmlinux"
else
	[ -e /sys/kernel/btf/vmlinux ] && no "BTF present" || ok "no BTF"
	j=$(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null || echo absent)
	[ "$j" = absent ] || [ "$j" = 0 ] && ok "bpf_jit_enable $j" || no "bpf_jit_enable $j"
	[ -r /proc/kallsyms ] && [ "$(grep -c " [Tt] " /proc/kallsyms)" -gt 1000 ] && ok "kallsyms" || no "kallsyms"
fi
for tp in sched/sched_process_exec sched/sched_process_exit sched/sched_process_fork task/task_newtask; do
	f=/sys/kernel/tracing/events/$tp/format
	grep -q "^ID:" $f 2>/dev/null && ok "tracefs $tp" || no "no $f"
done
[ -d /sys/kernel/debug/tracing/events/sched ] && ok "debugfs tracing" || no "no /sys/kernel/debug/tracing/events"
# 999 Hz asked; ~250 Hz means hrtimers run off jiffies (no TSC clocksource).
p=$("$helper") && [ "${p##*hz=}" -gt 400 ] && ok "perf cpu-clock: $p" || no "perf cpu-clock: $p (want > 400 Hz)"
id postgres >/dev/null && ok "id postgres" || no "no postgres user"
touch /tmp/x /run/x /var/tmp/x /dev/shm/x && ok "tmpfs writable" || no "tmpfs not writable"
touch /usr/x 2>/dev/null && no "/ is writable" || ok "/ read-only"
exit 3
'

pass=0 failn=0
for k in "${kernels[@]}"; do
	out=$("$HERE/run.sh" --kernel "$k" -- bash -c "$guest" guest "$k" "$helper" 2>&1)
	rc=$?
	echo "$out" | sed "s/^/  [$k] /"
	n=$(echo "$out" | grep -c '^ok: ')
	f=$(echo "$out" | grep -c '^FAIL: ')
	if [ $rc -ne 3 ]; then
		echo "FAIL: $k: run.sh exited $rc, wanted 3 (the command's exit code)"
		f=$((f + 1))
	else
		echo "ok: $k: exit code 3 came back"
		n=$((n + 1))
	fi
	[ "$n" -ge 10 ] || { echo "FAIL: $k: only $n checks passed"; f=$((f + 1)); }
	pass=$((pass + n)) failn=$((failn + f))
done
echo "vm selftest: $pass passed, $failn failed"
[ $failn -eq 0 ]
