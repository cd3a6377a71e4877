#!/bin/bash
# A compute VM, simulated: what the always-on daemon costs (issue 19's
# scenarios).  `profd serve` as the unit starts it (no targets: the whole
# system), scraped back to back the way Alloy does, SCRAPES scrapes of SECS
# at 19 Hz, under one of these loads, rounds interleaved (quiet, churn,
# quiet, churn, ...), a fresh daemon for each:
#
#   quiet  postgres under `pgbench -S -c 2 -R 800`: no new connections
#   churn  postgres under `pgbench -C -S -c 2 -R 100` (a backend forked for
#          each connection, ~100/s) plus a loop that execs short-lived
#          programs (sh, ls, python3) every 0.2 s
#   churn_image  the same, as on a compute image, which has no -dbg
#          packages: /usr/lib/debug hidden for the round (an empty
#          directory bound over it).  This machine has libc6-dbg (make test
#          installs it), whose DWARF the daemon decompresses and indexes for
#          libc's lines and inlined frames: ~18 MiB of its RSS under churn.
#
# Then, once each, a fork storm (FORKS forks of a shell that exit at once,
# no exec) and an exec storm (EXECS fork+execs of /bin/true) while a
# whole-system profile runs, against a quiet window as long: the daemon's
# CPU per fork and per exec.
#
# Per round: the daemon's CPU (utime+stime of /proc/PID/stat) over the
# scrapes, its peak RSS (VmHWM), the samples the scrapes held, the
# processes forked (/proc/stat), and the CPU time the daemon logged for
# building and encoding each profile.  One JSON object a line on stdout.
# Env: ROUNDS (3), SCRAPES (3), SECS (20), FORKS (3000), EXECS (3000),
# MODES ("quiet churn"), STORMS (1; 0: none), PROFD (build/profd: the
# binary, for an A/B of two builds), SERVE_ARGS (more options for serve,
# e.g. "--max-memory 32"), SMAPS_DIR (where to copy the daemon's
# /proc/PID/smaps and /metrics at each round's end: what its RSS is made
# of).
# Run as root: bash bench/compute_sim.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3} SCRAPES=${SCRAPES:-3} SECS=${SECS:-20}
MODES=${MODES:-quiet churn churn_image} STORMS=${STORMS:-1}
FORKS=${FORKS:-3000} EXECS=${EXECS:-3000}
export BUILD=${BUILD:-$PWD/build} TESTS=$PWD/tests
. tests/lib/common.sh
. tests/lib/serve.sh
. tests/lib/postgres.sh
TCK=$(getconf CLK_TCK)

# hide_debug / show_debug: churn_image's round.  The bind mount is in the
# host's mount namespace, so the targets' roots (/proc/PID/root, where the
# daemon looks first) show it too; it goes at the round's end or the
# script's, whichever comes first.
DEBUG_HIDDEN=
hide_debug() {
	mkdir -p "$WORK/nodebug"
	mount --bind "$WORK/nodebug" /usr/lib/debug
	DEBUG_HIDDEN=1
}
show_debug() {
	if [ -n "$DEBUG_HIDDEN" ]; then
		umount /usr/lib/debug
		DEBUG_HIDDEN=
	fi
}
trap 'show_debug; cleanup_common' EXIT

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# stages FILE: the daemon's CPU seconds by stage (/metrics), as JSON.
stages() {
	curl -sf -m 10 "$BASE/metrics" | python3 -c '
import json, re, sys
print(json.dumps({m[1]: float(m[2]) for m in re.finditer(r"^profd_stage_cpu_seconds_total\{stage=\"(\w+)\"\} (\S+)", sys.stdin.read(), re.M)}))' >"$1"
}
forks_total() { awk '$1 == "processes" { print $2 }' /proc/stat; }

# load MODE: start it; its pids in LOADS.
load() {
	LOADS=()
	case $1 in
	quiet)
		as_pg $PGBIN/pgbench -h "$WORK" -p $PGPORT -n -S -c 2 -R 800 -T 100000 postgres \
			>/dev/null 2>&1 &
		LOADS+=($!)
		;;
	churn)
		as_pg $PGBIN/pgbench -h "$WORK" -p $PGPORT -n -C -S -c 2 -R 100 -T 100000 postgres \
			>/dev/null 2>&1 &
		LOADS+=($!)
		# Debian's python3, as a compute has it (stripped, libpython linked
		# in), not whatever PATH finds first: a python built from source
		# (pyenv's) brings a libpython with full DWARF, which the daemon
		# would index at every profile, and no compute runs.
		( while :; do
			sh -c 'ls / >/dev/null'
			/usr/bin/python3 -c 'pass'
			sleep 0.2
		done ) &
		LOADS+=($!)
		;;
	esac
	PIDS_TO_KILL+=("${LOADS[@]}")
}
unload() {
	for p in "${LOADS[@]}"; do pkill -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
	for p in "${LOADS[@]}"; do wait "$p" 2>/dev/null || true; done
}
scrape() { # one scrape of SECS at 19 Hz; prints its samples
	curl -sf -m $((SECS + 120)) -o "$WORK/scrape.pb.gz" \
		"$BASE/debug/pprof/profile?seconds=$SECS&frequency=19" || fail "scrape failed"
	python3 - "$WORK/scrape.pb.gz" <<'PY'
import sys, pprof_raw
print(pprof_raw.load(sys.argv[1]).total())
PY
}
# stop_daemon: the daemon's log lines for builds, then it ends.
stop_daemon() {
	kill "$SERVE_PID" 2>/dev/null || true
	wait "$SERVE_PID" 2>/dev/null || true
}
logged() { # KIND: the ms the daemon logged per profile, comma-separated
	case $1 in
	build) grep -o 'built in [0-9.]* ms CPU' "$WORK/serve.err" | awk '{print $3}' ;;
	encode) grep -o 'encoded [0-9]* bytes in [0-9.]* ms CPU' "$WORK/serve.err" | awk '{print $5}' ;;
	esac | paste -sd, -
}

run_round() { # MODE ROUND
	local mode=$1 r=$2 c0 c1 f0 f1 t0 t1 samples=0 s
	load "${mode%_image}"
	if [ "$mode" = churn_image ]; then
		hide_debug
	fi
	# shellcheck disable=SC2086 # SERVE_ARGS: words
	serve "$(free_port 17600)" ${SERVE_ARGS:-}
	# The first scrape warms the caches (objects, kallsyms): not counted.
	scrape >/dev/null
	stages "$WORK/st0"
	c0=$(cpu_ticks "$SERVE_PID") f0=$(forks_total) t0=$(date +%s.%N)
	for _ in $(seq "$SCRAPES"); do
		s=$(scrape)
		samples=$((samples + s))
	done
	c1=$(cpu_ticks "$SERVE_PID") f1=$(forks_total) t1=$(date +%s.%N)
	stages "$WORK/st1"
	hwm=$(awk '/VmHWM/ {print $2}' "/proc/$SERVE_PID/status")
	anon=$(awk '/RssAnon/ {print $2}' "/proc/$SERVE_PID/status")
	if [ -n "${SMAPS_DIR:-}" ]; then
		cp "/proc/$SERVE_PID/smaps" "$SMAPS_DIR/$mode-$r.smaps"
		curl -sf -m 10 "$BASE/metrics" >"$SMAPS_DIR/$mode-$r.metrics" || true
	fi
	stop_daemon
	show_debug
	unload
	python3 - "$WORK/st0" "$WORK/st1" <<PY
import json, sys
cpu = ($c1 - $c0) / $TCK
wall = $t1 - $t0
s0, s1 = (json.load(open(f)) for f in sys.argv[1:3])
# The first build (the warm-up scrape's) reads kallsyms and every object:
# the warm figure is the median of the others.
build = [$(logged build)][1:]
encode = [$(logged encode)][1:]
print(json.dumps({"mode": "$mode", "round": $r, "cpu_s": cpu, "wall_s": round(wall, 2),
                  "cpu_pct": round(100 * cpu / wall, 4), "samples": $samples,
                  "forks": $f1 - $f0, "peak_rss_kib": $hwm, "rss_anon_kib": $anon,
                  "stage_cpu_s": {k: round(s1[k] - s0.get(k, 0), 4) for k in s1},
                  "build_ms": build, "encode_ms": encode}))
PY
}

# cpu_s: the daemon's CPU seconds so far, every thread's, to the nanosecond
# (schedstat's first field), whatever the daemon's version.
cpu_s() { cat /proc/"$SERVE_PID"/task/*/schedstat | awk '{ ns += $1 } END { printf "%.6f\n", ns / 1e9 }'; }

# storm KIND N: the daemon's CPU per fork (KIND fork: a subshell that exits,
# no exec) or per exec (KIND exec: fork+exec of /bin/true), while a
# whole-system profile runs.  A quiet window of the storm's length before
# it is the baseline; the storm's window ends 1 s after its last child, once
# the daemon has read every event.
storm() {
	local kind=$1 n=$2 c0 c1 c2 t0 t1 long
	serve "$(free_port 17600)"
	scrape >/dev/null
	long=$((SECS * 6))
	curl -sf -m $((long + 120)) -o /dev/null \
		"$BASE/debug/pprof/profile?seconds=$long&frequency=19" &
	local sc=$!
	sleep 2
	t0=$(date +%s.%N)
	if [ "$kind" = fork ]; then
		for _ in $(seq "$n"); do ( : ); done
	else
		for _ in $(seq "$n"); do /bin/true; done
	fi
	sleep 1
	t1=$(date +%s.%N)
	# The baseline: as long again, with nothing forked.
	c0=$(cpu_s)
	sleep "$(echo "$t1 - $t0" | bc)"
	c1=$(cpu_s)
	# And the storm once more, measured this time (the first warmed the
	# caches: the shell's binaries, /bin/true).
	if [ "$kind" = fork ]; then
		for _ in $(seq "$n"); do ( : ); done
	else
		for _ in $(seq "$n"); do /bin/true; done
	fi
	sleep 1
	c2=$(cpu_s)
	kill $sc 2>/dev/null || true
	wait $sc 2>/dev/null || true
	stop_daemon
	python3 - <<PY
import json
base, storm = $c1 - $c0, $c2 - $c1
print(json.dumps({"mode": "$kind-storm", "n": $n, "window_s": round($t1 - $t0, 2),
                  "cpu_s_base": round(base, 4), "cpu_s_storm": round(storm, 4),
                  "us_per_$kind": round(1e6 * max(storm - base, 0) / $n, 1)}))
PY
}

for r in $(seq "$ROUNDS"); do
	for mode in $MODES; do
		echo "compute_sim: round $r, $mode" >&2
		run_round $mode "$r"
	done
done
[ "$STORMS" = 0 ] && exit 0
echo "compute_sim: fork storm ($FORKS), exec storm ($EXECS)" >&2
storm fork "$FORKS"
storm exec "$EXECS"
