# Shared helpers for the shell tests.  Source it; it sets -euo pipefail.
set -euo pipefail
: "${BUILD:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../build" && pwd)}"
: "${TESTS:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${PROFD:=$BUILD/profd}"
export HOME=${HOME:-/root} GOCACHE=${GOCACHE:-/tmp/profd-gocache}
export PYTHONPATH=$TESTS/lib
WORK=$(mktemp -d /tmp/profd-test.XXXXXX)
chmod 755 "$WORK"
PIDS_TO_KILL=()
cleanup_common() {
	for p in "${PIDS_TO_KILL[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup_common EXIT

# A failing test shows the end of the daemon's log, if it ran one: CI keeps
# nothing else.
fail() {
	echo "FAIL: $*" >&2
	for f in "$WORK/serve.err" "$WORK/record.err"; do
		[ -s "$f" ] && { echo "-- last lines of $f:" >&2; tail -15 "$f" >&2; }
	done
	exit 1
}
# stop_bpftrace PID: bpftrace ends on SIGINT, but a signal that lands while
# it is still setting up is lost; repeat it, and kill it after 30 s.
stop_bpftrace() {
	for _ in $(seq 150); do
		kill -INT "$1" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
pass() { echo "ok: $*"; }
# await_title PID TITLE WHAT: until /proc/PID/cmdline begins with TITLE, as
# a process that writes its title over argv[0] (postgres's way) shows it;
# 30 s at most, else WHAT fails.  The whole title, from its first byte:
# before the write, the exec'd arguments or the shell that forked it may
# hold a part of it, and a poll for a part could pass on them.
await_title() {
	local n
	n=$(printf %s "$2" | wc -c)
	for _ in $(seq 300); do
		cmp -s -n "$n" <(printf %s "$2") "/proc/$1/cmdline" && return 0
		sleep 0.1
	done
	fail "$3: the title was not set: $(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)"
}
need_root() { [ "$(id -u)" -eq 0 ] || { echo "skip: needs root for BPF"; exit 77; }; }

# Start `profd record ARGS...` in the background; return once its sampler runs.
# Sets RECORD_PID; its stderr is in $WORK/record.err.
start_record() {
	# A previous run's "profiling" must not be found before this one's
	# redirection truncates the file (the background child may run later).
	rm -f "$WORK/record.err"
	"$PROFD" record "$@" 2>"$WORK/record.err" &
	RECORD_PID=$!
	# 30 s: it starts in about one, but beside the guests' lane (TCG on
	# both CPUs) loading its BPF object and reading kallsyms take longer;
	# what is asserted is that it starts.
	for _ in $(seq 300); do
		grep -q "profiling" "$WORK/record.err" 2>/dev/null && return 0
		kill -0 $RECORD_PID 2>/dev/null || { cat "$WORK/record.err"; fail "profd record died"; }
		sleep 0.1
	done
	fail "profd record did not start in 30 s"
}

# stop_record: end start_record's profile early (Ctrl-C), as a user does;
# it writes what it has and must exit 0.
stop_record() {
	kill -INT $RECORD_PID
	wait $RECORD_PID || fail "profd record $(head -c 300 "$WORK/record.err") exited $?"
}
