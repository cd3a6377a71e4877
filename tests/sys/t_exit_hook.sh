#!/bin/bash
# Where the exit snapshots and exit titles hang, and what every other
# process pays for it.  On a kernel whose sched_process_exit comes before
# exit_mm() (6.16+: its record has group_dead), the daemon must not attach
# the syscalls:sys_enter_exit_group tracepoint, which puts every syscall of
# every process on the traced path; PROFD_EXIT_HOOK=exit_group asks for
# that hook anyway (the old kernels' path, and bench/syscall_cost.sh's
# A/B).  What the snapshots give is asserted elsewhere: t_stacks
# (teardown samples with their user stacks), t_labels (labels from exit
# titles).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"
command -v bpftool >/dev/null || { echo "skip: no bpftool"; exit 77; }
TP=/sys/kernel/tracing/events
[ -d $TP ] || TP=/sys/kernel/debug/tracing/events

# The hooks this daemon attached, as bpftool names them.
hooks() { bpftool perf show | awk -v p="$SERVE_PID" '$2 == p { print $NF }' | sort -u | tr '\n' ' '; }

serve "$(free_port 17800)"
if grep -q group_dead $TP/sched/sched_process_exit/format; then
	expect=0
	case " $(hooks)" in *" sys_enter_exit_group "*) fail "attached sys_enter_exit_group: $(hooks)" ;; esac
else
	expect=1
	[ -d $TP/syscalls/sys_enter_exit_group ] || expect=0
fi
[ "$(metric profd_syscalls_traced)" = $expect ] ||
	fail "profd_syscalls_traced $(metric profd_syscalls_traced), not $expect on $(uname -r)"
echo "ok: $(uname -r): syscalls traced $expect; hooks: $(hooks)"
kill "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null || true

if [ -d $TP/syscalls/sys_enter_exit_group ]; then
	PROFD_EXIT_HOOK=exit_group serve "$(free_port 17800)"
	case " $(hooks)" in *" sys_enter_exit_group "*) ;; *) fail "PROFD_EXIT_HOOK=exit_group: hooks $(hooks)" ;; esac
	[ "$(metric profd_syscalls_traced)" = 1 ] || fail "PROFD_EXIT_HOOK=exit_group: profd_syscalls_traced not 1"
	grep -q "every syscall on the machine" "$WORK/serve.err" || fail "no log line for the syscall hook"
	echo "ok: PROFD_EXIT_HOOK=exit_group traces exit_group, and says so"
fi
echo "ok: t_exit_hook"
