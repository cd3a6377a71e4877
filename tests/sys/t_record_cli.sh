#!/bin/bash
# profd record: bad input gets one clear line and a non-zero exit.
. "$(dirname "$0")/../lib/common.sh"

expect_error() {
	local want=$1; shift
	set +e
	${RUNNER:-} "$PROFD" record "$@" >"$WORK/out" 2>"$WORK/err"
	local rc=$?
	set -e
	[ $rc -ne 0 ] || fail "profd record $* exited 0"
	[ "$(wc -l <"$WORK/err")" -eq 1 ] || { cat "$WORK/err"; fail "profd record $*: expected one line on stderr"; }
	grep -q -- "$want" "$WORK/err" || { cat "$WORK/err"; fail "profd record $*: no '$want'"; }
	pass "record $* -> $(cat "$WORK/err")"
}

expect_error "frequency must be 1..1000" --frequency 0 -o "$WORK/x"
expect_error "frequency must be 1..1000" --frequency 1001 -o "$WORK/x"
expect_error "frequency must be 1..1000" --frequency abc -o "$WORK/x"
expect_error "seconds must be" --seconds 0 -o "$WORK/x"
expect_error "not a process id" --pid -5 -o "$WORK/x"
expect_error "cannot write /nonexistent/dir/p.pb.gz" --seconds 1 -o /nonexistent/dir/p.pb.gz
expect_error "format must be pprof, folded or svg" --format svgz
expect_error "unexpected argument" --seconds 1 extra
expect_error "scratch-dir must be an absolute directory" --scratch-dir var/tmp -o "$WORK/x"
[ ! -e "$WORK/x" ] || fail "a failed record left its output file behind"

if [ "$(id -u)" -eq 0 ]; then
	# A pid that does not exist (pid_max is at most 4194304).
	expect_error "no process with pid 4194309" --pid 4194309 --seconds 1 -o "$WORK/x"
	expect_error "no such executable: /nonexistent/postgres" --exe /nonexistent/postgres -o "$WORK/x"
	# Without CAP_BPF/CAP_PERFMON: one line that says what is missing.
	if command -v setpriv >/dev/null; then
		RUNNER="setpriv --reuid=65534 --regid=65534 --clear-groups" \
			expect_error "not permitted to load BPF" --seconds 1 --format folded
	fi
fi

# A failed record removes only an output file it created: not /dev/null
# (a character device root could otherwise delete), not a file that was
# there before.
if [ "$(id -u)" -eq 0 ]; then
	expect_error "no process with pid 4194309" --pid 4194309 --seconds 1 -o /dev/null
	[ -c /dev/null ] || fail "a failed record -o /dev/null removed /dev/null"
	echo keep >"$WORK/old"
	expect_error "no process with pid 4194309" --pid 4194309 --seconds 1 -o "$WORK/old"
	[ -e "$WORK/old" ] || fail "a failed record removed a file that was there before"
fi
pass "failed records keep /dev/null and existing files"
