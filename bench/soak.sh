#!/bin/bash
# The daemon under churn, the way a fleet runs it: `profd serve` of the whole
# system, scraped back to back (SCRAPE_SECS each) for SOAK_SECS, while
# short-lived processes come and go from binaries that are replaced all the
# time (a new inode every round, so every binary is new to the symbolizer).
# Every 5 s: the daemon's RSS and open fds.  Every 100 ms: GET /health, timed
# from a separate client.  Then a fork storm: STORM fork+execs of /bin/true
# during one whole-system scrape, /health still timed.
# Prints one JSON object on stdout.  Env: SOAK_SECS (600), SCRAPE_SECS (10),
# STORM (5000).  Run as root: bash bench/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SOAK_SECS=${SOAK_SECS:-600} SCRAPE_SECS=${SCRAPE_SECS:-10} STORM=${STORM:-5000}
export BUILD=$PWD/build TESTS=$PWD/tests
. tests/lib/common.sh
. tests/lib/serve.sh

serve "$(free_port 17500)"

# Process churn: 10 binaries, each replaced by a fresh copy (new inode)
# before it runs 20 short-lived children of its own.
churn() {
	local i=0 b
	while :; do
		b=$WORK/churn-$((i % 10))
		cp "$BUILD/tests/forker" "$b.new" && mv -f "$b.new" "$b"
		"$b" 20 >/dev/null 2>&1 || true
		i=$((i + 1))
	done
}
churn &
CHURN=$!
PIDS_TO_KILL+=($CHURN)

: >$WORK/mem
: >$WORK/scrape_secs
: >$WORK/curl.err
( while kill -0 $SERVE_PID 2>/dev/null; do
	echo "$(date +%s) $(awk '/VmRSS/ {print $2}' /proc/$SERVE_PID/status) $(ls /proc/$SERVE_PID/fd | wc -l)" >>$WORK/mem
	sleep 5
done ) &
PIDS_TO_KILL+=($!)
health_probe $WORK/health_soak
end=$(($(date +%s) + SOAK_SECS))
scrapes=0
failed=0
while [ "$(date +%s)" -lt "$end" ]; do
	t=$(date +%s.%N)
	if ! curl -sS -f -m $((SCRAPE_SECS + 120)) -o $WORK/scrape.pb.gz \
		"$BASE/debug/pprof/profile?seconds=$SCRAPE_SECS" 2>>$WORK/curl.err; then
		failed=$((failed + 1))
		kill -0 $SERVE_PID || fail "profd serve died: $(tail -5 $WORK/serve.err)"
	fi
	scrapes=$((scrapes + 1))
	echo "$(date +%s.%N) $t" | awk '{printf "%.2f\n", $1 - $2}' >>$WORK/scrape_secs
	echo "soak: scrape $scrapes, $(tail -1 $WORK/mem), $(tail -1 $WORK/scrape_secs) s" >&2
done
kill $PROBE $CHURN 2>/dev/null || true
wait $CHURN 2>/dev/null || true
curl -sf -m 30 "$BASE/metrics" >$WORK/metrics_soak

# The fork storm, during one whole-system scrape.
health_probe $WORK/health_storm
curl -sf -m 300 -o $WORK/storm.pb.gz "$BASE/debug/pprof/profile?seconds=$((SCRAPE_SECS * 3))" &
SCRAPE=$!
sleep 1
t0=$(date +%s.%N)
# A subshell, so that its wait is for its own children only.
( for _ in $(seq $((STORM / 100))); do
	for _ in $(seq 100); do /bin/true & done
	wait
done )
t1=$(date +%s.%N)
wait $SCRAPE || fail "the scrape during the fork storm failed"
kill $PROBE

python3 - $WORK "$SOAK_SECS" "$scrapes" "$STORM" "$t0" "$t1" "$failed" <<'PY'
import json, re, statistics, sys
work, secs, scrapes, storm, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
failed = int(sys.argv[7])
scrape_secs = [float(l) for l in open(f"{work}/scrape_secs")]
curl_errors = open(f"{work}/curl.err").read().splitlines()[:5] if failed else []
mem = [l.split() for l in open(f"{work}/mem") if len(l.split()) == 3]
def lat(name):
    rows = [l.split() for l in open(f"{work}/{name}") if l.strip()]
    ms = sorted(float(r[0]) for r in rows)
    bad = sum(1 for r in rows if r[1] != "200")
    q = lambda p: ms[min(len(ms) - 1, int(p * len(ms)))] if ms else None
    return {"n": len(ms), "p50_ms": q(0.5), "p99_ms": q(0.99), "max_ms": ms[-1] if ms else None, "failed": bad}
# Flat: the last third of the soak against the middle third (the first
# third is warm-up: caches filling to their bounds).
third = len(mem) // 3
rss = [int(m[1]) for m in mem]
fds = [int(m[2]) for m in mem]
def drift(xs):
    if third < 2:
        return None
    return statistics.median(xs[2 * third:]) / statistics.median(xs[third:2 * third]) - 1
metrics = {}
for line in open(f"{work}/metrics_soak"):
    m = re.match(r"(profd_\w+(?:\{[^}]*\})?) ([\d.e+-]+)$", line.strip())
    if m:
        metrics[m.group(1)] = float(m.group(2))
print(json.dumps({
    "soak_seconds": secs, "scrapes": scrapes, "scrapes_failed": failed, "curl_errors": curl_errors,
    "scrape_seconds_median": statistics.median(scrape_secs), "scrape_seconds_max": max(scrape_secs),
    "rss_kib": rss, "fds": fds,
    "rss_drift": drift(rss), "fds_drift": drift(fds),
    "health_soak": lat("health_soak"),
    "storm_forks": storm, "storm_seconds": t1 - t0, "health_storm": lat("health_storm"),
    "metrics": metrics,
}))
PY
