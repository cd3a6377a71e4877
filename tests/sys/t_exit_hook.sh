#!/bin/bash
# Where the exit snapshots and exit titles hang, and what every other
# process pays for it (the config's exit_hook, docs/operations.md).  The
# default, auto: at sched_process_exit where it comes before exit_mm()
# (6.16+: its record has group_dead), else none, never the
# syscalls:sys_enter_exit_group tracepoint, which puts every syscall of
# every process on the traced path (+54 ns a syscall here,
# bench/syscall_cost.sh).  "exit_group" asks for that hook; "off" for none.
# Each hook is seen to work: postgres backends that exit under pgbench -C
# send their titles (profd_process_exit_titles_total), and none without a
# hook.  Postgres runs before the daemon starts, as on a compute whose
# profd restarts: the daemon finds the postmaster at start, so every
# backend forked after inherits where its title and wait event are.  And
# with or without an exit hook, an off-CPU profile of postgres carries
# wait_event labels (the same entry says where the wait event is: tied to
# the exit hook, it left Debian's 6.1 and the computes' 6.12 without them).
# What the snapshots give is asserted elsewhere: t_stacks (teardown
# samples with their user stacks), t_labels (labels from exit titles).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"
. "$(dirname "$0")/../lib/postgres.sh"
command -v bpftool >/dev/null || { echo "skip: no bpftool"; exit 77; }
TP=/sys/kernel/tracing/events
[ -d $TP ] || TP=/sys/kernel/debug/tracing/events

# hooks: the tracepoints this daemon attached, a line each, as bpftool names them.
hooks() { bpftool perf show | awk -v p="$SERVE_PID" '$2 == p && $7 == "tracepoint" { print $8 }'; }
# expect_hooks WHAT N_SCHED_EXIT SYSCALL(0|1) TRACED(0|1): the hooks the
# daemon SERVE_PID took, and whether 40 short-lived backends' titles came
# at their exits during a profile (with a hook) or not (none); then stops it.
expect_hooks() {
	local h n titles=0 t0 scrape off
	# Titles are kept for sessions: one runs while the backends come and go.
	# (long enough for a loaded machine: the daemon is stopped before it ends).
	curl -s -m 120 -o /dev/null "$BASE/debug/pprof/profile?seconds=60" &
	scrape=$!
	PIDS_TO_KILL+=("$scrape")
	sessions_running 1
	t0=$(metric profd_process_exit_titles_total)
	pgbench_run -C -S -c 1 -t 40
	for _ in $(seq 50); do
		titles=$(($(metric profd_process_exit_titles_total) - t0))
		[ "$titles" -ge 40 ] && break
		sleep 0.1
	done
	if [ "$2" = 2 ] || [ "$3" = 1 ]; then
		# All of them (41 in runs here: the metric's own psql too).  Before
		# the scan at start, 15 to 41: only once a postgres process had
		# been sampled did the postmaster get its title area.
		[ "$titles" -ge 40 ] || fail "$1: $titles exit titles for 40 backends"
	else
		[ "${titles:-0}" = 0 ] || fail "$1: $titles exit titles without an exit hook"
	fi
	h=$(hooks)
	n=$(grep -c '^sched_process_exit$' <<<"$h" || true)
	[ "$n" = "$2" ] || fail "$1: $n programs on sched_process_exit, not $2: $(echo $h)"
	if [ "$3" = 1 ]; then
		grep -q '^sys_enter_exit_group$' <<<"$h" || fail "$1: no sys_enter_exit_group: $(echo $h)"
	else
		! grep -q '^sys_enter_exit_group$' <<<"$h" || fail "$1: sys_enter_exit_group attached: $(echo $h)"
	fi
	[ "$(metric profd_syscalls_traced)" = "$4" ] ||
		fail "$1: profd_syscalls_traced $(metric profd_syscalls_traced), not $4"
	# Wait events, whatever the exit hook: an idle connection's
	# Client:ClientRead at least.
	curl -sf -m 60 -o "$WORK/offcpu.pb.gz" "$BASE/debug/pprof/offcpu?seconds=3" &
	off=$!
	sessions_running 2
	pgbench_run -S -c 1 -T 2
	wait $off || fail "$1: the off-CPU scrape failed"
	python3 - "$WORK/offcpu.pb.gz" "$1" <<'PY' || fail "$1: no wait_event in an off-CPU profile"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
ev = {s["labels"].get("wait_event") for s in p.samples if s["labels"].get("process_name") == "postgres"}
assert "Client:ClientRead" in ev, f"{sys.argv[2]}: wait events {ev}"
PY
	echo "ok: $1 on $(uname -r): $(echo $h); exit titles $titles; an off-CPU profile has wait_event"
	kill "$scrape" 2>/dev/null || true
	kill "$SERVE_PID"
	wait "$SERVE_PID" 2>/dev/null || true
}

if grep -q group_dead $TP/sched/sched_process_exit/format; then
	serve "$(free_port 17800)" --exe postgres
	expect_hooks "auto (6.16+)" 2 0 0
else
	serve "$(free_port 17800)" --exe postgres
	grep -q "no exit snapshots: before 6.16" "$WORK/serve.err" || fail "auto before 6.16: no log line"
	expect_hooks "auto (before 6.16)" 1 0 0
fi

PROFD_EXIT_HOOK=off serve "$(free_port 17800)" --exe postgres
expect_hooks "PROFD_EXIT_HOOK=off" 1 0 0

if [ -d $TP/syscalls/sys_enter_exit_group ]; then
	echo '{"exit_hook": "exit_group"}' >"$WORK/exit.json"
	serve "$(free_port 17800)" --exe postgres --config "$WORK/exit.json"
	grep -q "every syscall on the machine takes the kernel's traced path" "$WORK/serve.err" ||
		fail "exit_hook exit_group: no log line"
	expect_hooks '"exit_hook": "exit_group"' 1 1 1
fi

# A wrong value is the config's error, and no daemon.
echo '{"exit_hook": "sometimes"}' >"$WORK/bad.json"
if "$PROFD" serve --listen 127.0.0.1:"$(free_port 17800)" --config "$WORK/bad.json" 2>"$WORK/bad.err"; then
	fail "a bad exit_hook was taken"
fi
grep -q '"exit_hook" must be "auto", "exit_group" or "off"' "$WORK/bad.err" ||
	fail "a bad exit_hook: $(cat "$WORK/bad.err")"
echo "ok: a bad exit_hook is refused: $(grep -o "\"exit_hook\" must.*" "$WORK/bad.err")"
echo "ok: t_exit_hook"
