#!/bin/bash
# Profiles are built off the event loop (issue 11, defect 8).  The daemon
# runs with PROFD_FAULT_BUILD_DELAY_MS, so every build takes at least that
# long on the builder thread; meanwhile /health must answer quickly, a
# client that hangs up mid-build is let go without harm, DELETE of a POST
# being built answers as it does while it runs, and SIGTERM still gives the
# waiting client its profile.  Before the builder thread, one /health waited
# for the whole build.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

DELAY_MS=4000
"$BUILD/tests/inline_target" 300 >/dev/null &
BURN=$!
PIDS_TO_KILL+=("$BURN")
PROFD_FAULT_BUILD_DELAY_MS=$DELAY_MS serve "$(free_port 17600)" --pid "$BURN"

metric() { curl -s -m 5 "$BASE/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
# wait_building N: until N profiles are queued or building.
wait_building() {
	for _ in $(seq 300); do
		[ "$(metric profd_builds_queued)" = "$1" ] && return 0
		sleep 0.05
	done
	fail "profd_builds_queued never reached $1"
}

# --- /health while a scrape's profile is built
health_probe "$WORK/health" 0.05
start=$(date +%s%N)
call scrape GET "/debug/pprof/profile?seconds=1"
ms=$((($(date +%s%N) - start) / 1000000))
sleep 0.3
kill "$PROBE"
wait "$PROBE" 2>/dev/null || true
expect_code scrape 200 "a scrape built slowly"
n=$(pprof_check "$WORK/scrape.body" "a scrape built slowly")
# Took the delay: the build really was slow.
[ "$ms" -ge $((1000 + DELAY_MS - 100)) ] || fail "the scrape came back after $ms ms, before its build's delay"
read -r count max bad < <(awk '{n++; if ($1 > m) m = $1; if ($2 != 200) b++} END {print n, m, b + 0}' "$WORK/health")
# 20 probes a second at most: a loop held by the build would have
# answered one of them after seconds.  The bound is far above what a
# loaded machine adds, far below the delay.
[ "$bad" -eq 0 ] || fail "$bad /health probes failed"
[ "$count" -ge 20 ] || fail "only $count /health probes during $ms ms"
awk -v m="$max" 'BEGIN {exit !(m < 1500)}' ||
	fail "/health took $max ms while a profile was built ($DELAY_MS ms build)"
pass "scrape: $n samples after $ms ms (build delayed $DELAY_MS ms); /health answered $count times meanwhile, slowest $max ms"

# --- the client hangs up while its profile is built; the daemon goes on
curl -s -m 30 -o /dev/null "$BASE/debug/pprof/profile?seconds=1" &
GONE=$!
wait_building 1
kill "$GONE"
wait "$GONE" 2>/dev/null || true
wait_building 0
grep -q '499' "$WORK/serve.err" || fail "no 499 logged for the client that left: $(tail -5 "$WORK/serve.err")"
call after GET "/debug/pprof/profile?seconds=1"
expect_code after 200 "a scrape after a client left mid-build"
pprof_check "$WORK/after.body" "after a client left mid-build" >/dev/null
pass "a client gone mid-build: 499 logged, its build finished and freed, the next scrape 200"

# --- DELETE while a POST's profile is built: 200, and the POST gets 204
curl -s -m 30 -X POST -H 'Content-Type: application/json' -D "$WORK/post.hdr" \
	-o "$WORK/post.body" -d '{"profiler": {"Perf": null}, "timeout_seconds": 1}' \
	"$BASE/profile/cpu" &
POST=$!
wait_building 1
call del DELETE /profile/cpu
wait "$POST"
expect_code del 200 "DELETE while the POST's profile is built"
[ "$(head -1 "$WORK/post.hdr" | awk '{print $2}')" = 204 ] ||
	fail "the POST stopped while built: $(head -1 "$WORK/post.hdr")"
call idle GET /profile/cpu
expect_code idle 204 "GET after"
pass "DELETE during the build: 200, the POST 204, then idle"

# --- SIGTERM while a profile is built: the client still gets it
call_bg() { curl -s -m 60 -o "$WORK/term.body" -w '%{http_code}' "$BASE/debug/pprof/profile?seconds=1" >"$WORK/term.code"; }
call_bg &
TERMC=$!
wait_building 1
kill -TERM "$SERVE_PID"
wait "$TERMC"
wait "$SERVE_PID" || fail "profd serve exited $? on SIGTERM during a build"
[ "$(cat "$WORK/term.code")" = 200 ] || fail "SIGTERM during a build: status $(cat "$WORK/term.code")"
pprof_check "$WORK/term.body" "SIGTERM during a build" >/dev/null
pass "SIGTERM during a build: the waiting client got its profile, exit 0"
