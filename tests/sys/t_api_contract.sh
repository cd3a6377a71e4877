#!/bin/bash
# The compute_ctl contract of /profile/cpu, walked with curl: every status
# code, the exact JSON strings clients compare, the headers, and bodies that
# `go tool pprof` reads.  Plus /health and /metrics.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

POST=(-H 'Content-Type: application/json')
IN_PROGRESS='"Profiling is currently in progress."'
ALREADY='"Profiling is already in progress."'
STOPPED='"Profiling stopped successfully."'
NOT_RUNNING='"Profiling is not in progress, there is nothing to stop."'

"$BUILD/tests/inline_target" 120 >/dev/null &
BURN=$!
PIDS_TO_KILL+=("$BURN")
serve "$(free_port 17120)" --pid "$BURN"

# Poll GET until it says 200 (the POST's session is running).
wait_running() {
	for _ in $(seq 50); do
		call status GET /profile/cpu
		[ "$CODE" = 200 ] && return 0
		sleep 0.1
	done
	fail "GET /profile/cpu never said a POST was running"
}

# --- idle
call idle GET /profile/cpu
expect_code idle 204 "GET when idle"
[ ! -s "$WORK/idle.body" ] || fail "GET 204 has a body"
call del DELETE /profile/cpu
expect_code del 412 "DELETE when idle"
expect_body del "$NOT_RUNNING" "DELETE when idle"
pass "idle: GET 204, DELETE 412"

# --- a POST runs: GET 200, a second POST 409, then the profile
status_of() { head -1 "$WORK/$1.hdr" | awk '{print $2}'; }
curl -s -m 30 -X POST "${POST[@]}" -D "$WORK/post1.hdr" -o "$WORK/post1.pb" \
	-d '{"profiler": {"BccProfile": null}, "sampling_frequency": 99, "timeout_seconds": 3, "archive": false}' \
	"$BASE/profile/cpu" &
POST1=$!
wait_running
expect_body status "$IN_PROGRESS" "GET during a POST"
call post2 POST /profile/cpu "${POST[@]}" -d '{"profiler": {"Perf": null}, "timeout_seconds": 1}'
expect_code post2 409 "second POST"
expect_body post2 "$ALREADY" "second POST"
wait $POST1
[ "$(status_of post1)" = 200 ] || fail "POST: status $(status_of post1)"
[ "$(header post1 Content-Type)" = application/octet-stream ] ||
	fail "POST Content-Type: $(header post1 Content-Type)"
[ "$(header post1 Content-Disposition)" = 'attachment; filename="profile.pb"' ] ||
	fail "POST Content-Disposition: $(header post1 Content-Disposition)"
! is_gzip "$WORK/post1.pb" || fail "archive false gave a gzipped body"
n=$(pprof_check "$WORK/post1.pb" "POST archive false")
pass "POST: 200, ungzipped pprof with $n samples; GET 200 and POST 409 while it ran"
call idle GET /profile/cpu
expect_code idle 204 "GET after the POST"

# --- archive true
CODE=$(curl -s -m 30 -X POST "${POST[@]}" -D "$WORK/post3.hdr" -o "$WORK/post3.pb.gz" -w '%{http_code}' \
	-d '{"profiler": {"BccProfile": "/usr/share/bcc/tools/profile"}, "timeout_seconds": 1, "archive": true}' \
	"$BASE/profile/cpu")
[ "$CODE" = 200 ] || fail "POST archive: status $CODE"
[ "$(header post3 Content-Type)" = application/gzip ] ||
	fail "archive Content-Type: $(header post3 Content-Type)"
[ "$(header post3 Content-Disposition)" = 'attachment; filename="profile.pb.gz"' ] ||
	fail "archive Content-Disposition: $(header post3 Content-Disposition)"
is_gzip "$WORK/post3.pb.gz" || fail "archive true did not give gzip"
n=$(pprof_check "$WORK/post3.pb.gz" "POST archive true")
pass "POST archive: 200, application/gzip, profile.pb.gz, $n samples"

# --- profd's variants of profiler: an off-CPU and a wall-clock profile,
# by the same contract (the unknown ones stay 422, below)
for v in OffCpu:switches/count,offcpu/nanoseconds Wall:samples/count,time/nanoseconds; do
	CODE=$(curl -s -m 30 -X POST "${POST[@]}" -D "$WORK/var.hdr" -o "$WORK/var.pb.gz" \
		-w '%{http_code}' -d "{\"profiler\": {\"${v%%:*}\": null}, \"timeout_seconds\": 1, \"archive\": true}" \
		"$BASE/profile/cpu")
	[ "$CODE" = 200 ] || fail "POST ${v%%:*}: status $CODE: $(cat "$WORK/var.pb.gz")"
	is_gzip "$WORK/var.pb.gz" || fail "POST ${v%%:*}: not gzip"
	types=$(python3 -c 'import sys, pprof_raw; print(",".join(pprof_raw.load(sys.argv[1]).sample_types))' \
		"$WORK/var.pb.gz") || fail "POST ${v%%:*}: go tool pprof cannot read it"
	[ "$types" = "${v#*:}" ] || fail "POST ${v%%:*}: sample types $types, want ${v#*:}"
done
pass "POST with profiler OffCpu and Wall: 200, off-CPU and wall-clock profiles"

# --- DELETE cancels: 200 for the DELETE, 204 for the POST
start=$(date +%s)
call post4 POST /profile/cpu "${POST[@]}" \
	-d "{\"profiler\": {\"Perf\": null}, \"timeout_seconds\": 60, \"targets\": {\"pids\": [$BURN]}}" &
POST4=$!
wait_running
call del DELETE /profile/cpu
expect_code del 200 "DELETE during a POST"
expect_body del "$STOPPED" "DELETE during a POST"
wait $POST4
[ "$(status_of post4)" = 204 ] || fail "the cancelled POST got $(status_of post4), want 204"
[ $(($(date +%s) - start)) -lt 10 ] || fail "the cancelled POST took until its timeout"
call idle GET /profile/cpu
expect_code idle 204 "GET after DELETE"
call del DELETE /profile/cpu
expect_code del 412 "second DELETE"
pass "DELETE: 200 and the POST got 204; then GET 204, DELETE 412"

# --- 422: each names its field
bad() { # FIELD BODY
	call bad POST /profile/cpu "${POST[@]}" -d "$2"
	expect_code bad 422 "body $2"
	grep -q "\"error\"" "$WORK/bad.body" && grep -q "$1" "$WORK/bad.body" ||
		fail "422 for $2 does not name $1: $(body bad)"
}
for v in -1 0 1001 1000000 '"99"' 1.5 true null 99999999999999999999999; do
	bad sampling_frequency "{\"profiler\": {\"BccProfile\": null}, \"sampling_frequency\": $v}"
done
for v in -1 0 61 '"5"' 2.5 false 18446744073709551616; do
	bad timeout_seconds "{\"profiler\": {\"BccProfile\": null}, \"timeout_seconds\": $v}"
done
bad archive '{"profiler": {"BccProfile": null}, "archive": "yes"}'
bad profiler '{"profiler": {"Foo": null}}'
bad profiler '{"profiler": "BccProfile"}'
bad profiler '{"profiler": {"Perf": 5}}'
bad profiler '{"profiler": {"Perf": null, "BccProfile": null}}'
bad profiler '{"sampling_frequency": 99}'
bad profiler '{}'
bad targets.pids '{"profiler": {"Perf": null}, "targets": {"pids": ["1"]}}'
bad targets.pids '{"profiler": {"Perf": null}, "targets": {"pids": [0]}}'
bad targets.exes '{"profiler": {"Perf": null}, "targets": {"exes": [""]}}'
bash -c 'exit 0' &
dead=$!
wait $dead
bad "$dead" "{\"profiler\": {\"Perf\": null}, \"targets\": {\"pids\": [$dead]}}"
pass "422 for bad frequency/timeout/archive/variant/targets, naming the field"

# A path a client names is looked up as a user with no privilege would: a
# file in a directory only root can search answers as an absent one does,
# so any local user cannot learn what exists there (issue 25, item 6).
mkdir -p "$WORK/secret" "$WORK/public"
chmod 0700 "$WORK/secret"
chmod 0755 "$WORK/public" "$WORK"
cp "$BUILD/tests/inline_target" "$WORK/secret/app"
cp "$BUILD/tests/inline_target" "$WORK/public/app"
exe_answer() { # PATH: "CODE BODY-WITHOUT-THE-PATH" of a POST naming it
	call ex POST /profile/cpu "${POST[@]}" \
		-d "{\"profiler\": {\"Perf\": null}, \"timeout_seconds\": 1, \"targets\": {\"exes\": [\"$1\"]}}"
	echo "$CODE $(sed "s|$1|PATH|" "$WORK/ex.body")"
}
secret=$(exe_answer "$WORK/secret/app")
absent=$(exe_answer "$WORK/secret/nothing")
echo "in a 0700 directory: $secret; absent: $absent"
[ "$secret" = "$absent" ] || fail "a file in a root-only directory answers unlike an absent one"
[[ "$secret" == 422* ]] || fail "a path in a root-only directory answered $secret"
[[ "$(exe_answer "$WORK/public/app")" == 200* ]] || fail "a visible path was refused"
pass "targets.exes in a directory only root can search: the same 422 as an absent file"

# --- 400, 415, 413
for b in '{"profiler": {"BccProfile": null}' '{"profiler": {"Perf": null}}x' \
	"{'profiler': {'Perf': null}}" '{"profiler": {"Perf": null},}' '' 'NaN'; do
	call mal POST /profile/cpu "${POST[@]}" -d "$b"
	expect_code mal 400 "malformed JSON '$b'"
	grep -q '"error"' "$WORK/mal.body" || fail "400 body is not a JSON error: $(body mal)"
done
call ct POST /profile/cpu -H 'Content-Type: text/plain' -d '{"profiler": {"Perf": null}}'
expect_code ct 415 "text/plain"
call ct POST /profile/cpu -d '{"profiler": {"Perf": null}}'
expect_code ct 415 "form content type"
head -c $((100 * 1024)) /dev/zero | tr '\0' ' ' >"$WORK/big.json"
call big POST /profile/cpu "${POST[@]}" --data-binary @"$WORK/big.json"
expect_code big 413 "100 KiB body"
grep -q '"error"' "$WORK/big.body" || fail "413 body is not a JSON error: $(body big)"
pass "400 malformed JSON, 415 wrong Content-Type, 413 100 KiB body"

# --- /health and /metrics
call health GET /health
expect_code health 200 "/health"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["status"] == "ok", d' \
	"$WORK/health.body" || fail "/health: $(body health)"
call metrics GET /metrics
expect_code metrics 200 "/metrics"
[[ "$(header metrics Content-Type)" == "text/plain; version=0.0.4"* ]] ||
	fail "/metrics Content-Type: $(header metrics Content-Type)"
for m in profd_samples_total profd_samples_lost_total profd_sessions_running \
	profd_sessions_started_total profd_symbolizer_cache_bytes profd_processes_tracked; do
	grep -q "^$m [0-9]" "$WORK/metrics.body" || fail "/metrics lacks $m"
done
for c in 200 204 409 412 413 415 422 400; do
	grep -q "^profd_http_requests_total{route=\"/profile/cpu\",code=\"$c\"} [1-9]" \
		"$WORK/metrics.body" || fail "/metrics does not count a $c on /profile/cpu"
done
grep -q '^profd_sessions_running 0$' "$WORK/metrics.body" || fail "sessions still running"
started=$(awk '/^profd_sessions_started_total/ {print $2}' "$WORK/metrics.body")
[ "$started" -ge 3 ] || fail "profd_sessions_started_total is $started, want >= 3"
pass "/health ok, /metrics has every metric and counts requests by route and code"

grep -q 'POST /profile/cpu 409 ' "$WORK/serve.err" || fail "no access log line for the 409"

# A hang-up, or a USR1/USR2 meant as "reload", in the middle of a scrape:
# the daemon says so and the scrape gets its profile (issue 25, item 9).
curl -s -m 30 -o "$WORK/hup.body" -w '%{http_code}' "$BASE/debug/pprof/profile?seconds=2" \
	>"$WORK/hup.code" &
scrape=$!
sessions_running 1
for sig in HUP USR1 USR2; do
	kill -$sig "$SERVE_PID"
done
wait $scrape || true
[ "$(cat "$WORK/hup.code")" = 200 ] && [ -s "$WORK/hup.body" ] ||
	fail "a scrape during SIGHUP/USR1/USR2 got $(cat "$WORK/hup.code")"
kill -0 "$SERVE_PID" || fail "profd serve died of SIGHUP, SIGUSR1 or SIGUSR2"
for name in Hangup "User defined signal 1" "User defined signal 2"; do
	grep -q "$name: ignored, still serving" "$WORK/serve.err" || fail "no log line for $name"
done
pass "SIGHUP, SIGUSR1, SIGUSR2 mid-scrape: logged, the scrape answered 200"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "profd serve exited $? on SIGTERM"
pass "SIGTERM: exit 0"
