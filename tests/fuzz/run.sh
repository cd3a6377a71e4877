#!/bin/bash
# Runs fuzz targets: run.sh RUNS SECONDS NAME...  (make fuzz; t_fuzz_smoke.sh)
# Each target fuzz_X runs for RUNS inputs (-1: no limit) or SECONDS (0: no
# limit), whichever ends first, from its seeds: tests/fuzz/corpus/X (kept in
# git, regressions included) and $FUZZ/seeds/X (made by make from real
# files).  New inputs go to $FUZZ/corpus/X (or $CORPUS_OUT/X), crashes to
# $FUZZ/crashes/.  Prints one line per target; exits 1 if any crashed.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${FUZZ:?FUZZ=build/fuzz directory}"
runs=$1 seconds=$2
shift 2
out=${CORPUS_OUT:-$FUZZ/corpus}
# Reports go to each target's log (not to `make test SANITIZE=1`'s files).
export ASAN_OPTIONS=detect_leaks=1:suppressions=$PWD/tests/lib/asan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lib/lsan.supp:print_suppressions=0
rc=0
for bin in "$@"; do
	name=${bin#fuzz_}
	seeds=()
	for d in "tests/fuzz/corpus/$name" "$FUZZ/seeds/$name"; do
		[ -d "$d" ] && seeds+=("$d")
	done
	mkdir -p "$out/$name" "$FUZZ/crashes" "$FUZZ/logs"
	log=$FUZZ/logs/$name.log
	start=$(date +%s)
	"$FUZZ/$bin" -runs="$runs" -max_total_time="$seconds" -print_final_stats=1 \
		-timeout=25 -rss_limit_mb=2048 -artifact_prefix="$FUZZ/crashes/$name-" \
		"$out/$name" "${seeds[@]}" >"$log" 2>&1
	status=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	feats=$(grep -o 'ft: [0-9]*' "$log" | tail -1)
	echo "$bin: ${execs:-?} inputs in $(($(date +%s) - start)) s, ${feats:-ft: ?}, corpus $(ls "$out/$name" | wc -l), exit $status"
	if [ "$status" -ne 0 ] || [ -z "$execs" ]; then
		grep -m1 -A40 -E '^==[0-9]+==ERROR|runtime error|SUMMARY|deadly signal|Timeout|out-of-memory' "$log" >&2 ||
			tail -40 "$log" >&2
		ls "$FUZZ/crashes/$name-"* 2>/dev/null | sed 's/^/  crashing input: /' >&2
		rc=1
	fi
done
exit $rc
