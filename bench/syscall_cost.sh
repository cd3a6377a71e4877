#!/bin/bash
# What profd costs the syscalls of a process it does not profile.  Run as
# root:  bash bench/syscall_cost.sh
# build/tests/syscall_loop (5 million getppid() syscalls, on CPU 1) in
# interleaved rounds of:
#   none        no daemon
#   serve       `profd serve` of the whole system, as the unit starts it:
#               its exit snapshots at sched_process_exit where the kernel
#               has it before exit_mm() (6.16+), else none
#   exit_group  the same with PROFD_EXIT_HOOK=exit_group ("exit_hook":
#               "exit_group", the only hook before 6.16), a syscall
#               tracepoint, which puts every thread of every process on the
#               traced syscall path
# The order turns round by round.  Output: key=value lines, per variant the
# median ns a syscall and its runs, and the paired differences to none.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-7}
export BUILD=$PWD/build TESTS=$PWD/tests PROFD=${PROFD:-$PWD/build/profd}
. tests/lib/common.sh
need_root
. tests/lib/serve.sh
LOOP=$BUILD/tests/syscall_loop
[ -x "$LOOP" ] || fail "no $LOOP (make)"
VARIANTS=(none serve exit_group)
declare -A res
for r in $(seq "$ROUNDS"); do
	for i in 0 1 2; do
		v=${VARIANTS[$(((r + i) % 3))]}
		case $v in
		serve) serve "$(free_port 17700)" ;;
		exit_group) PROFD_EXIT_HOOK=exit_group serve "$(free_port 17700)" ;;
		esac
		ns=$(taskset -c 1 "$LOOP" | awk '{ print $2 }')
		if [ $v != none ]; then
			[ $v = exit_group ] && [ "$(metric profd_syscalls_traced)" != 1 ] &&
				fail "PROFD_EXIT_HOOK=exit_group did not trace exit_group"
			echo "traced_$v=$(metric profd_syscalls_traced)" >>"$WORK/traced"
			kill "$SERVE_PID"
			wait "$SERVE_PID" 2>/dev/null || true
		fi
		res[$v]="${res[$v]:-} $ns"
		echo "round $r $v: $ns ns" >&2
	done
done
sort -u "$WORK/traced"
for v in "${VARIANTS[@]}"; do echo "$v ${res[$v]}"; done | python3 -c '
import statistics, sys
res = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in sys.stdin}
for v in ("none", "serve", "exit_group"):
    runs = res[v]
    print(f"ns_{v}_median={statistics.median(runs):.1f} ns_{v}_runs=" + ",".join(f"{x:.1f}" for x in runs))
    if v != "none":
        d = [a - b for a, b in zip(runs, res["none"])]
        print(f"{v}_added_ns_median={statistics.median(d):.1f} {v}_added_ns=" + ",".join(f"{x:.1f}" for x in d))
'
