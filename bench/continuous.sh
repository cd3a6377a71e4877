#!/bin/bash
# The daemon itself under continuous profiling, the way Alloy scrapes it:
# PostgreSQL 15 under a steady pgbench load, `profd serve --exe postgres`,
# and SCRAPES scrapes of /debug/pprof/profile?seconds=SECS&frequency=19
# back to back (59 s every 60 s in full).  Prints JSON on stdout: RSS
# samples (steady = median, peak = VmHWM), and the CPU time profd logged
# for symbolizing and for encoding each profile.  Env: SCRAPES, SECS.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRAPES=${SCRAPES:-10} SECS=${SECS:-59}
export BUILD=$PWD/build TESTS=$PWD/tests
. tests/lib/common.sh
. tests/lib/serve.sh
. tests/lib/postgres.sh

# A steady load for the whole run: 4 clients, rate-limited so the machine
# keeps room for the daemon, and reconnecting now and then.
as_pg $PGBIN/pgbench -h "$WORK" -p $PGPORT -c 4 -j 2 -R 2000 -T $((SCRAPES * (SECS + 1) + 30)) \
	postgres >/dev/null 2>&1 &
LOAD=$!
PIDS_TO_KILL+=($LOAD)
serve "$(free_port 17400)" --exe postgres
: >$WORK/rss
: >$WORK/rss_anon
( while kill -0 $SERVE_PID 2>/dev/null; do
	awk '/VmRSS/ {print $2}' /proc/$SERVE_PID/status >>$WORK/rss 2>/dev/null || true
	# Private memory; the rest of RSS is page cache of the ELF files read.
	awk '/RssAnon/ {print $2}' /proc/$SERVE_PID/status >>$WORK/rss_anon 2>/dev/null || true
	sleep 2
done ) &
for i in $(seq $SCRAPES); do
	curl -sf -m $((SECS + 60)) -o $WORK/scrape.pb.gz \
		"$BASE/debug/pprof/profile?seconds=$SECS&frequency=19" || fail "scrape $i failed"
	echo "scrape $i: $(stat -c %s $WORK/scrape.pb.gz) bytes" >&2
done
hwm=$(awk '/VmHWM/ {print $2}' /proc/$SERVE_PID/status)
build=$(grep -o 'built in [0-9.]* ms CPU' $WORK/serve.err | awk '{print $3}' | paste -sd, -)
encode=$(grep -o 'encoded [0-9]* bytes in [0-9.]* ms CPU' $WORK/serve.err | awk '{print $5}' | paste -sd, -)
samples=$(grep -o 'profile: [0-9]* samples' $WORK/serve.err | awk '{print $2}' | paste -sd, -)
rss=$(paste -sd, $WORK/rss)
rss_anon=$(paste -sd, $WORK/rss_anon)
echo "{\"scrapes\": $SCRAPES, \"seconds\": $SECS, \"rss_kib\": [$rss], \"peak_rss_kib\": $hwm," \
     "\"rss_anon_kib\": [$rss_anon]," \
     "\"build_ms\": [$build], \"encode_ms\": [$encode], \"samples\": [$samples]}"
