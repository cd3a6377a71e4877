#!/bin/bash
# Two builds of the daemon by turns, scraped as Alloy's `offcpu` and
# `fgprof` blocks scrape it (docs/operations.md): `profd serve --pid
# <postmaster>` with two loops of back-to-back SCRAPE-second scrapes of
# /debug/pprof/offcpu and, started half a scrape later, /debug/fgprof, so
# that they overlap and the sched_switch program stays attached, under
# pgbench TPC-B-like -c 8 -j 2 for SECS, beside an idle psql connection
# whose backend waits in ClientRead throughout.  Each round runs both
# builds, in an order that turns every round.  Per run: the daemon's CPU
# over the pgbench run (its threads' schedstat), its peak RSS (VmHWM), TPS,
# and the most off-CPU time one backend has in one off-CPU scrape, in
# windows (time is counted per window: a wait kept whole gives a scrape at
# most its window; one kept with p < 1 weighs 1/p).
# Run as root: OLD=path/to/profd NEW=build/profd bash bench/offcpu_scrapes_ab.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECS:-20} SCRAPE=${SCRAPE:-4} ROUNDS=${ROUNDS:-6}
OLD=${OLD:?OLD=path of the other profd} NEW=${NEW:-build/profd}
TESTS=$PWD/tests
. tests/lib/common.sh
. tests/lib/postgres.sh
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# loop ROUTE TAG: scrapes until $WORK/stop exists.
loop() {
	local i=0
	while [ ! -e "$WORK/stop" ]; do
		curl -s -m 60 -o "$WORK/$2.$i.pb.gz" \
			"http://127.0.0.1:$PORT$1?seconds=$SCRAPE&labels=default,pid" || true
		i=$((i + 1))
	done
}
# The threads' CPU time of pid $1, in ns.
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{n += $1} END {printf "%d\n", n}'; }

for r in $(seq "$ROUNDS"); do
	order="$OLD $NEW"
	[ $((r % 2)) = 1 ] || order="$NEW $OLD"
	for bin in $order; do
		rm -f "$WORK"/stop "$WORK"/*.pb.gz
		"$bin" serve --listen 127.0.0.1:"$PORT" --pid "$PM" 2>"$WORK/serve.err" &
		sp=$!
		for _ in $(seq 300); do
			curl -sf -o /dev/null "http://127.0.0.1:$PORT/health" && break
			sleep 0.1
		done
		psql_pg -c 'select 1' >/dev/null
		loop /debug/pprof/offcpu off &
		l1=$!
		sleep "$(awk -v s="$SCRAPE" 'BEGIN {print s / 2}')"
		loop /debug/fgprof wall &
		l2=$!
		sleep 1
		(echo 'select 1;'; sleep $((SECS + 2))) | psql_pg >/dev/null &
		idle=$!
		c0=$(cpu_ns $sp)
		pgbench_run -c 8 -j 2 -T "$SECS"
		c1=$(cpu_ns $sp)
		touch "$WORK/stop"
		wait $l1 $l2 $idle
		hwm=$(awk '/VmHWM/ {print $2}' /proc/$sp/status)
		kill $sp
		wait $sp 2>/dev/null || true
		tps=$(awk '/^tps/ {print $3; exit}' "$WORK/pgbench.out")
		most=$(python3 - "$WORK" "$SCRAPE" <<'PY'
import sys, glob, collections
sys.path.insert(0, "tests/lib")
import pprof_raw
work, window = sys.argv[1], float(sys.argv[2])
most = 0
for f in glob.glob(f"{work}/off.*.pb.gz"):
    per = collections.Counter()
    for s in pprof_raw.load(f).samples:
        per[s["labels"].get("pid")] += s["values"][1]
    most = max([most] + [v / 1e9 / window for v in per.values()])
print(f"{most:.2f}")
PY
)
		name=new
		[ "$bin" = "$NEW" ] || name=old
		echo "round $r: $name daemon CPU $(((c1 - c0) / 1000000)) ms over ${SECS} s," \
			"VmHWM $hwm kB, $tps TPS, most off-CPU of one backend in a scrape: $most windows"
	done
done
