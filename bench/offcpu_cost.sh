#!/bin/bash
# What the off-CPU program (src/bpf/offcpu.bpf.c) costs per context switch,
# from kernel.bpf_stats_enabled's run_time_ns / run_cnt of profd_offcpu:
#  A. switches of threads that are no target: an off-CPU profile of a
#     process that never switches (sleep) while offcpu_target, not a
#     target, switches ~10,000 times a second;
#  B. target switches, every one kept (--off-cpu-period-us 10): its
#     switch-out takes the stacks, its switch-in sends the time;
#  C. target switches at the default period (10 ms): offcpu_target's
#     150 us naps are kept ~1 in 60.
# B and C: the cost of a target switch (its switch-out and switch-in runs
# together) = (run_time - non-target runs x A's cost) / target switches,
# the target switches counted by the program itself (offcpu_stats).
#  E. the yardstick, in the same rounds: bpftrace's
#     `tracepoint:sched:sched_switch /pid == T/ { @[kstack, ustack] =
#     count(); }` for offcpu_target T, the two stacks of every switch-out of
#     the target as bcc's offcputime takes them: its run time less what
#     the same program without them (`/pid == T/ { @n = count(); }`, in
#     its own run) costs a run, over the switches of the target it
#     counted, plus one such run.  B over E says what profd's kept switch
#     costs against the usual way of taking the same stacks, on this
#     machine: a program that takes a kernel stack at this tracepoint
#     pays for the kernel's unwinder through the BPF and perf frames.
# Run as root: bash bench/offcpu_cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECS:-8} ROUNDS=${ROUNDS:-3}
OUT=${OUT:-/dev/stdout}
. tests/lib/common.sh
. bench/lib/bpf_stats.sh
bpf_stats_on

# measure ARGS...: profd record ARGS (--off-cpu unless --wall) for SECS,
# with offcpu_target running; prints "run_time_ns run_cnt switches kept
# sample_run_time_ns sample_run_cnt" near its end.
measure() {
	local kind=--off-cpu
	[ "$1" != --wall ] || kind=
	./build/tests/offcpu_target $((SECS + 10)) >/dev/null &
	local w=$!
	./build/profd record $kind --seconds $SECS "$@" -o $WORK/p.pb.gz 2>$WORK/err &
	local p=$!
	for _ in $(seq 300); do grep -q profiling $WORK/err 2>/dev/null && break; sleep 0.1; done
	sleep $((SECS - 1))
	offcpu_stats_of $p
	wait $p
	kill $w 2>/dev/null || true
	wait $w 2>/dev/null || true
}

# bt_measure STACKS: "run_time_ns run_cnt target_switches" of bpftrace's
# sched_switch program for offcpu_target, with the stacks (1) or without (0).
bt_measure() {
	./build/tests/offcpu_target $((SECS + 10)) >/dev/null &
	local w=$! what='@n = count();'
	[ "$1" = 0 ] || what='@s[kstack, ustack] = count(); @n = count();'
	bpftrace -e "tracepoint:sched:sched_switch /pid == $w/ { $what }" >$WORK/bt.out 2>$WORK/bt.err &
	local b=$! st
	for _ in $(seq 300); do
		[ "$(bpf_prog_stat_of $b 5 | cut -d' ' -f2)" -gt 0 ] && break
		sleep 0.1
	done
	sleep $((SECS - 1))
	st=$(bpf_prog_stat_of $b 5)
	stop_bpftrace $b
	kill $w 2>/dev/null || true
	wait $w 2>/dev/null || true
	echo "$st $(awk '/^@n:/ {print $2}' $WORK/bt.out)"
}

command -v bpftrace >/dev/null || fail "no bpftrace (make test-deps)"
sleep 100000 &
IDLE=$!
rows=()
for r in $(seq $ROUNDS); do
	read -r at ac _ _ _ _ < <(measure --pid $IDLE)
	read -r bt bc bs bk _ _ < <(measure --off-cpu-period-us 10 --exe offcpu_target)
	read -r ct cc cs ck _ _ < <(measure --exe offcpu_target)
	read -r dt dc ds dk dst dsc < <(measure --wall --exe offcpu_target)
	read -r ft fc _ < <(bt_measure 0)
	read -r et ec es < <(bt_measure 1)
	row=$(python3 -c "
a = $at / $ac
f = $ft / max($fc, 1)
e = ($et - $ec * f) / max(${es:-0}, 1) + f
b = ($bt - ($bc - 2 * $bs) * a) / max($bs, 1)
c = ($ct - ($cc - 2 * $cs) * a) / max($cs, 1)
d = ($dt - ($dc - 2 * $ds) * a) / max($ds, 1)
print(f'{a:.0f} {b:.0f} {c:.0f} {$bk / max($bs, 1):.3f} {$ck / max($cs, 1):.4f} {$bs} {$cs} '
      f'{d:.0f} {$dst / max($dsc, 1):.0f} {$ds} {$dsc} {e:.0f} {${es:-0}}')")
	echo "round $r: non-target ${row%% *} ns/run; A B C, kept shares, target switches;" \
		"D (wall) per switch, per cpu-clock sample, switches, samples; E (bpftrace)" \
		"per switch, switches: $row" >&2
	rows+=("$row")
done
printf '%s\n' "${rows[@]}" | python3 -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin]
med = lambda i: statistics.median(r[i] for r in rows)
print(f"offcpu_nontarget_ns={med(0):.0f} offcpu_kept_switch_ns={med(1):.0f} "
      f"offcpu_default_switch_ns={med(2):.0f} default_kept_share={med(4):.4f} "
      f"offcpu_wall_switch_ns={med(7):.0f} offcpu_wall_sample_ns={med(8):.0f} "
      f"offcpu_bpftrace_switch_ns={med(11):.0f} "
      f"offcpu_kept_to_bpftrace={statistics.median(r[1] / r[11] for r in rows if r[11] > 0):.3f}")
for i, k in ((0, "nontarget"), (1, "kept_switch"), (2, "default_switch"), (7, "wall_switch"),
             (8, "wall_sample"), (11, "bpftrace_switch")):
    print(f"offcpu_{k}_ns_rounds=" + ",".join(f"{r[i]:.0f}" for r in rows))' > $OUT
