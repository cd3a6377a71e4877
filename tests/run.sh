#!/bin/bash
# Runs every test: the Criterion unit tests, then each tests/sys/t_*.sh.
# A shell test passes with exit 0, is skipped with 77, fails otherwise.
# The last line is "N passed, N failed, N skipped".
#
# SANITIZE=1 (make test SANITIZE=1): $BUILD is the ASan+UBSan build (with
# SANITIZE=thread, the TSan build).  Every
# sanitized process writes its reports to $BUILD/sanitizer/report.PID, and
# a test after which a report appeared fails, whatever it exited with (the
# daemon's stderr is often not looked at, and a report at exit, such as a
# leak, comes after the test has its answers).
cd "$(dirname "$0")/.."
# The tests' own makes (make dist, make bench QUICK=1, the cross builds,
# the README's in a fresh root) are not this make's jobs: its jobserver
# is not theirs to share.
unset MAKEFLAGS MFLAGS MAKELEVEL
export BUILD=${BUILD:-$PWD/build}
export PROFD=$BUILD/profd TESTS=$PWD/tests
pass=0 fail=0 skip=0 failed=""

# LOAD=N (make test LOAD=2): N CPU-bound processes run beside the whole
# suite, as on a shared CI machine.  Tests bound what they assert, not
# wall-clock luck, so they must pass like this too.
if [ "${LOAD:-0}" -gt 0 ]; then
	for _ in $(seq "$LOAD"); do
		sh -c 'while :; do :; done' &
		load_pids="${load_pids:-} $!"
	done
	trap 'kill $load_pids 2>/dev/null' EXIT
	echo "== $LOAD CPU-bound processes run beside the tests:$load_pids"
fi

# Tests that measure timings or boot other kernels: their figures mean
# nothing for a sanitized binary (2-3 times slower), the VM guests and the
# fresh root (t_readme_fresh) run
# the normal build anyway.  The fuzz targets are always sanitized: the
# normal suite runs them.
SANITIZE_SKIP="t_vm_kernels t_vm_accel t_readme_fresh t_bench_quick t_fuzz_smoke t_dist_roots t_arm64_pg"
# Shell tests `make test` leaves out unless ARM64=1 (the arm64 guests
# with postgres: 8-13 min of TCG cached, more on a fresh machine, which
# builds their kernel and root first; docs/benchmarks.md): run then, or
# when ONLY names them (make test-arm64, with NO_UNIT=1: no unit tests).
SPLIT_TESTS="t_arm64_pg"
[ -n "${ARM64:-}" ] && SPLIT_TESTS=""
# The guests' lane: tests that boot kernels under qemu (TCG on machines
# like CI's) and touch nothing of the host's kernel side run one after
# the other in a second lane, beside the rest.  One after the other, they
# took 18 of a cached .ci/run's 53 minutes; beside the host's tests they
# slow (TCG shares the two CPUs: t_vm_kernels 360 s -> 605-1,489 s), but
# the whole run took 36-45 (docs/benchmarks.md, "The suite's time").
# Listed in the order a fresh machine can run them: those needing no built
# kernel or root first, so the slow builds (.ci/run's background
# prefetch) have the longest start.
# Their output is kept and printed once both lanes are done.  LANES=1: all
# in one lane, in name order, as before.
VM_LANE="t_vm_accel t_arm64_build t_arm64_vm t_vm_kernels t_arm64_pg"
[ "${LANES:-2}" = 1 ] && VM_LANE=""
if [ -n "${SANITIZE:-}" ]; then
	reports=$BUILD/sanitizer
	rm -rf "$reports"
	mkdir -p "$reports"
	chmod 1777 "$reports"
	export ASAN_OPTIONS=log_path=$reports/report:detect_leaks=1:suppressions=$PWD/tests/lib/asan.supp
	export UBSAN_OPTIONS=log_path=$reports/report:print_stacktrace=1:halt_on_error=1
	export LSAN_OPTIONS=suppressions=$PWD/tests/lib/lsan.supp:print_suppressions=0
	# SANITIZE=thread: data races between the builder thread and the loop's.
	export TSAN_OPTIONS=log_path=$reports/report:halt_on_error=0:second_deadlock_stack=1
fi
# sanitizer_check NAME: 0 if no sanitizer report appeared since the last call.
sanitizer_check() {
	[ -n "${SANITIZE:-}" ] || return 0
	local new
	new=$(ls "$reports"/report.* 2>/dev/null)
	[ -z "$new" ] && return 0
	mkdir -p "$reports/$1"
	for f in $new; do
		echo "-- sanitizer report ($f):" >&2
		head -60 "$f" >&2
		mv "$f" "$reports/$1/"
	done
	return 1
}

# One Criterion binary per layer (tests/unit/LAYER/), bottom up: a failure
# low down is read first.  UNIT_LAYERS comes from the Makefile (src/LAYERS).
if [ -z "${UNIT_LAYERS:-}" ]; then
	UNIT_LAYERS=$(sed -n 's/^\([a-z]*\):.*/\1/p' src/LAYERS)
fi
[ -n "${NO_UNIT:-}" ] && UNIT_LAYERS=""
for layer in $UNIT_LAYERS; do
	[ -d "tests/unit/$layer" ] || continue
	echo "== unit tests: $layer (Criterion)"
	if [ "${SANITIZE:-}" = thread ]; then
		# Criterion maps its shared arena where TSan's shadow memory lives.
		echo "skip: Criterion cannot run under TSan (the daemon's tests below do)"
		skip=$((skip + 1))
	elif "$BUILD/tests/unit_$layer" --jobs 1 && sanitizer_check "unit_$layer"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); failed="$failed unit/$layer"
	fi
done

# wanted T: whether this run takes shell test T.
wanted() {
	local t=$1 o
	# ONLY=t_a,t_b: the shell tests whose names contain one of them.
	if [ -n "${ONLY:-}" ]; then
		for o in ${ONLY//,/ }; do [[ "$t" == *"$o"* ]] && return 0; done
		return 1
	fi
	[[ " $SPLIT_TESTS " != *" $(basename "$t" .sh) "* ]]
}
# count T RC SECONDS: the verdict's line and the tally.
count() {
	echo "-- $1: rc=$2 in ${3}s"
	case $2 in
	0) pass=$((pass + 1)) ;;
	77) skip=$((skip + 1)) ;;
	*) fail=$((fail + 1)); failed="$failed $1" ;;
	esac
}

# The guests' lane, in the background: each test's output to its own file,
# its verdict to another.  Sanitized runs skip these tests anyway.
lane_tests=""
if [ -z "${SANITIZE:-}" ]; then
	for n in $VM_LANE; do
		wanted "tests/sys/$n.sh" && lane_tests="$lane_tests tests/sys/$n.sh"
	done
fi
lane_pid=""
if [ -n "$lane_tests" ]; then
	lane_dir=$(mktemp -d /tmp/profd-lane.XXXXXX)
	echo "== in a second lane, printed at the end:$lane_tests"
	(
		for t in $lane_tests; do
			start=$(date +%s)
			bash "$t" >"$lane_dir/$(basename "$t").log" 2>&1 </dev/null
			rc=$?
			echo "$rc $(( $(date +%s) - start ))" >"$lane_dir/$(basename "$t").rc"
			# A line as each ends, so a run cut short still says how far
			# the lane got.
			echo "-- (second lane) $t: rc=$rc, output at the end"
		done
	) &
	lane_pid=$!
	trap 'kill $lane_pid ${load_pids:-} 2>/dev/null' EXIT
fi

# Each shell test's output, kept for the failures' summary at the end: a
# CI log shown only in part (its end) still says why each test failed.
logs=$(mktemp -d /tmp/profd-logs.XXXXXX)
for t in tests/sys/t_*.sh; do
	wanted "$t" || continue
	[[ " $lane_tests " == *" $t "* ]] && continue
	echo "== $t"
	if [ -n "${SANITIZE:-}" ] && [[ " $SANITIZE_SKIP " == *" $(basename "$t" .sh) "* ]]; then
		echo "skip: not run under SANITIZE=1 (timings, other kernels)"
		skip=$((skip + 1))
		continue
	fi
	start=$(date +%s)
	# To a file, then shown: a pipe to tee would wait for any process a
	# test leaves behind holding its output.
	bash "$t" >"$logs/$(basename "$t").log" 2>&1
	rc=$?
	cat "$logs/$(basename "$t").log"
	if ! sanitizer_check "$(basename "$t" .sh)" && { [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; }; then
		rc=1
	fi
	count "$t" "$rc" $(( $(date +%s) - start ))
done

if [ -n "$lane_pid" ]; then
	start=$(date +%s)
	wait "$lane_pid"
	echo "== the second lane: done $(( $(date +%s) - start ))s after the first"
	for t in $lane_tests; do
		echo "== $t (second lane)"
		cat "$lane_dir/$(basename "$t").log"
		cp "$lane_dir/$(basename "$t").log" "$logs/" 2>/dev/null
		if read -r rc secs <"$lane_dir/$(basename "$t").rc" 2>/dev/null; then
			count "$t" "$rc" "$secs"
		else
			count "$t" 1 0
		fi
	done
	rm -rf "$lane_dir"
fi
for t in $failed; do
	[ -f "$logs/$(basename "$t").log" ] || continue
	echo "== why $t failed (the last lines of its output, above in full):"
	grep -v ' GET /metrics \| GET /health ' "$logs/$(basename "$t").log" | tail -25
done
rm -rf "$logs"
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
