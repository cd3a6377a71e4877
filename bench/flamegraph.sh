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

# Debian's postgresql-15 in a temporary data directory, as t_postgres.sh does.
PGBIN=/usr/lib/postgresql/15/bin
[ -x $PGBIN/postgres ] || fail "postgresql-15 is not installed (make test-deps)"
PGDATA=$WORK/pgdata PGPORT=$((20000 + RANDOM % 20000))
mkdir -p "$PGDATA" && chown postgres: "$PGDATA" "$WORK"
as_pg() { runuser -u postgres -- "$@"; }
as_pg $PGBIN/initdb -D "$PGDATA" -A trust >/dev/null
as_pg $PGBIN/pg_ctl -D "$PGDATA" -l "$WORK/pg.log" -w \
	-o "-p $PGPORT -k $WORK -c listen_addresses=''" start >/dev/null
stop_pg() { as_pg $PGBIN/pg_ctl -D "$PGDATA" -m immediate stop >/dev/null 2>&1 || true; cleanup_common; }
trap stop_pg EXIT
as_pg $PGBIN/pgbench -h "$WORK" -p $PGPORT -i -s 10 postgres >/dev/null 2>&1

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
