#!/bin/bash
# A real flamegraph: PostgreSQL under pgbench, profiled by executable with
# `profd record --format svg`, then opened in headless Chromium (the tests'
# tests/lib/browser.js) to time its rendering and take the screenshot that
# docs/ shows.  Run as root: bash bench/flamegraph.sh
#   SECS (60)   how long to profile; pgbench runs 2 s longer
#   FREQ (99)   sampling frequency, Hz
#   PNG         where the screenshot goes (docs/img/flamegraph-postgres.png)
#   SVG         keep the SVG there too (default: not kept)
#   ROUNDS (3)  renderings timed, each in a fresh browser
# Prints the SVG's size, frame count and render times, for docs/benchmarks.md.
cd "$(dirname "$0")/.."
export BUILD=$PWD/build TESTS=$PWD/tests
. tests/lib/common.sh
need_root
. tests/lib/browser.sh
SECS=${SECS:-60} FREQ=${FREQ:-99} ROUNDS=${ROUNDS:-3}
PNG=${PNG:-$PWD/docs/img/flamegraph-postgres.png}

PGSCALE=10
. tests/lib/postgres.sh

# The default TPC-B-like load, 4 clients: reads, writes, WAL, commits.
start_record --exe postgres --seconds "$SECS" --frequency "$FREQ" --format svg -o "$WORK/pg.svg"
as_pg $PGBIN/pgbench -h "$WORK" -p $PGPORT -c 4 -j 2 -T $((SECS + 2)) postgres \
	>"$WORK/pgbench.out" 2>&1 || { cat "$WORK/pgbench.out"; fail "pgbench failed"; }
wait "$RECORD_PID" || { cat "$WORK/record.err"; fail "profd record failed"; }
grep -E "^tps" "$WORK/pgbench.out" || true
xmllint --noout "$WORK/pg.svg" || fail "the SVG is not well-formed"
[ -n "${SVG:-}" ] && cp "$WORK/pg.svg" "$SVG"

bytes=$(stat -c %s "$WORK/pg.svg")
frames=$(grep -c '^<g class="[aruikm]">' "$WORK/pg.svg")
echo "svg: $bytes bytes ($(python3 -c "print(round($bytes / 1048576, 2))") MiB), $frames frames, ${SECS} s at ${FREQ} Hz"
echo "$(grep -o 'class="sub"[^<]*' "$WORK/pg.svg" | cut -d'>' -f2)"
for r in $(seq "$ROUNDS"); do
	browser render "$WORK/pg.svg" | sed "s/^/render $r: /"
done
mkdir -p "$(dirname "$PNG")"
browser screenshot "$WORK/pg.svg" "$PNG" | sed "s|^|screenshot $PNG: |"
