#!/bin/bash
# The fuzz targets (tests/fuzz, `make fuzz`) run briefly: every committed
# seed, regressions included, and new inputs for FUZZ_SMOKE_SECONDS each.
# Fails on any crash, leak, sanitizer report or timeout.
source "$(dirname "$0")/../lib/common.sh"
FUZZ=$BUILD/fuzz
secs=${FUZZ_SMOKE_SECONDS:-15}
names=()
for src in "$TESTS"/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c)
	[ -x "$FUZZ/$name" ] || fail "$FUZZ/$name is not built (make fuzz-build)"
	names+=("$name")
done
[ ${#names[@]} -ge 5 ] || fail "only ${#names[@]} fuzz targets"
# New inputs go to a scratch corpus, so the smoke never changes build/fuzz.
FUZZ=$FUZZ CORPUS_OUT=$WORK/corpus "$TESTS/fuzz/run.sh" -1 "$secs" "${names[@]}" | tee "$WORK/out" ||
	fail "a fuzz target crashed (reproduce: $FUZZ/fuzz_NAME CRASH-FILE)"
while read -r name execs _; do
	# Even on a loaded machine every target runs its seeds and hundreds more.
	[ "$execs" -ge 200 ] || fail "$name ran only $execs inputs in $secs s"
done < "$WORK/out"
pass "${#names[@]} fuzz targets, $secs s each, no crash"
