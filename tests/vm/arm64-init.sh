#!/bin/busybox sh
# /init of the arm64 guest (tests/sys/t_arm64_vm.sh): Debian 12's arm64
# kernel under qemu-system-aarch64 (TCG, -cpu max: PAC and BTI), busybox,
# the static arm64 profd and three arm64 workloads built with
# -mbranch-protection=standard.  Profiles each with `profd record`, prints
# the folded stacks between markers for the host to check, powers off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
echo "GUEST: $(uname -r) $(uname -m) $(grep -m1 Features /proc/cpuinfo)"
run() {	# name, profd record's arguments
	n=$1; shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	/profd record "$@" --format folded -o /tmp/$n.folded 2>/tmp/$n.err
	echo "RC $n $? $t0 $(cut -d' ' -f1 /proc/uptime)"
	grep -E "profile:|error|warn" /tmp/$n.err | head -5
	echo "BEGIN $n"; cat /tmp/$n.folded; echo "END $n"
}
/w/nofp_target 600 & p1=$!
sleep 1
run nofp --exe nofp_target --seconds 5 --frequency 99
# The compute kernels have no JIT: the same with every program interpreted.
echo 0 >/proc/sys/net/core/bpf_jit_enable
echo "JIT $(cat /proc/sys/net/core/bpf_jit_enable)"
run nofp_nojit --exe nofp_target --seconds 5 --frequency 99
echo 1 >/proc/sys/net/core/bpf_jit_enable
kill $p1
/w/sig_target 600 & p2=$!
/w/clock_target 600 & p3=$!
sleep 1
run sigclock --pid $p2 --pid $p3 --seconds 5 --frequency 99
kill $p2 $p3
# System calls: samples in kernel mode, whose user registers are at the top
# of the kernel stack.
(while :; do dd if=/dev/zero of=/dev/null bs=64k count=2000 2>/dev/null; done) & p4=$!
sleep 1
run system --seconds 4 --frequency 99
kill $p4
# Heap: probes on libc's allocators (x30 is the return address at them).
/w/heap_target wait 16 >/tmp/ht.out & p5=$!
run heap --heap --exe heap_target --seconds 10 &
pr=$!
# The allocations start once the probes are in: profd says "profiling"
# when they are.  A fixed sleep here was wall-clock luck: on Debian's
# 6.1.187 and later, under TCG, profd took over 3.5 s to get there, the
# churn ran before it, and the heap profile came out empty.
for _ in $(seq 600); do
	grep -q profiling /tmp/heap.err 2>/dev/null && break
	sleep 0.2
done
kill -USR1 $p5
wait $pr
kill $p5
echo "GUEST-DONE"
poweroff -f
