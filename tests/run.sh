#!/bin/bash
# Runs every test: the Criterion unit tests, then each tests/t_*.sh.
# A shell test passes with exit 0, is skipped with 77, fails otherwise.
# The last line is "N passed, N failed, N skipped".
cd "$(dirname "$0")/.."
export PROFD=$PWD/build/profd BUILD=$PWD/build TESTS=$PWD/tests
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

echo "== unit tests (Criterion)"
if ./build/tests/unit --jobs 1; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed unit"; fi

for t in tests/t_*.sh; do
	[ -n "${ONLY:-}" ] && [[ "$t" != *"$ONLY"* ]] && continue
	echo "== $t"
	start=$(date +%s)
	bash "$t"
	rc=$?
	echo "-- $t: rc=$rc in $(( $(date +%s) - start ))s"
	case $rc in
	0) pass=$((pass + 1)) ;;
	77) skip=$((skip + 1)) ;;
	*) fail=$((fail + 1)); failed="$failed $t" ;;
	esac
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
