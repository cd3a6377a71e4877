#!/bin/bash
# The daemon under abuse: garbage bytes, oversized headers, a client that
# stalls mid-request, clients that hang up mid-profile, unknown routes and
# wrong methods, more parallel scrapes than session slots, and SIGTERM with
# profiles pending.  Afterwards it still serves a valid profile.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

metric() { curl -s -m 5 "$BASE/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
CAP=$(awk '/#define PROFD_MAX_SESSIONS/ {print $3}' "$TESTS/../src/bpf/abi/targets.h")
[ -n "$CAP" ] || fail "cannot read PROFD_MAX_SESSIONS from src/bpf/abi/targets.h"

"$BUILD/tests/inline_target" 600 >/dev/null &
BURN=$!
PIDS_TO_KILL+=("$BURN")
PORT=$(free_port 17180)
serve "$PORT" --pid "$BURN"

# --- a slow client: half a request, then nothing.  The watcher times it
# from its own connect to the daemon's close, so neither the other steps'
# duration nor a slow start of the watcher matters; checked at the end.
python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
t = time.monotonic()
s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
s.settimeout(60)
try:
    while s.recv(4096):
        pass
except OSError:
    pass
print("%.1f" % (time.monotonic() - t))' "$PORT" >"$WORK/slow_s" &
SLOW_WATCH=$!
for _ in $(seq 100); do
	[ "$(metric profd_http_connections_open)" -ge 2 ] && break
	sleep 0.1
done
# curl's own timing: under load, starting curl can take longer than the request.
t=$(curl -s -m 10 -o /dev/null -w '%{http_code} %{time_total}' "$BASE/health")
[ "${t% *}" = 200 ] || fail "/health while a client stalls: ${t% *}"
awk -v s="${t#* }" 'BEGIN {exit !(s < 2)}' || fail "/health took ${t#* } s while a client stalls"

# --- garbage on the socket
garbage() { # NAME: send stdin raw, keep what comes back
	exec 3<>/dev/tcp/127.0.0.1/"$PORT"
	# The daemon may close before all is sent: that is an answer too.
	cat >&3 2>/dev/null || true
	timeout 12 cat <&3 >"$WORK/$1.out" || true
	exec 3>&-
	if [ -s "$WORK/$1.out" ]; then
		head -1 "$WORK/$1.out" | grep -Eq '^HTTP/1.[01] (4[0-9][0-9]|501) ' ||
			fail "$1: answered $(head -1 "$WORK/$1.out")"
	fi
}
{ head -c 4096 /dev/urandom; printf '\r\n\r\n'; } | garbage random
{ head -c 4096 /dev/zero; printf '\r\n\r\n'; } | garbage zeros
printf 'BLAH /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' | garbage method
printf 'GET /health HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n' | garbage version
printf 'GET\r\n\r\n' | garbage short
printf 'POST /profile/cpu HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n{}' | garbage length
call h GET /health
expect_code h 200 "/health after garbage"
pass "garbage bytes, bad methods, versions and lengths: 4xx/501 or closed; still serving"

# --- headers over 16 KiB
big=$(head -c 20000 /dev/zero | tr '\0' a)
code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$BASE/health" || true)
case $code in 400 | 413 | 431 | 000) ;; *) fail "20 KB of headers got $code" ;; esac
call h GET /health
expect_code h 200 "/health after huge headers"
pass "20 KB of headers refused ($code)"

# --- unknown routes, wrong methods
for path in /nope /profile /profile/cpu/ /debug/pprof/block /debug/pprof/profile/x /health/x; do
	call nf GET "$path"
	expect_code nf 404 "GET $path"
	if [[ "$path" == /debug/pprof/* ]]; then
		expect_pprof_error nf "404 for $path"
	else
		grep -q '"error"' "$WORK/nf.body" || fail "404 for $path is not a JSON error: $(body nf)"
	fi
done
wrong() { # METHOD PATH ALLOW
	call wm "$1" "$2"
	expect_code wm 405 "$1 $2"
	[ "$(header wm Allow)" = "$3" ] || fail "$1 $2: Allow '$(header wm Allow)', want '$3'"
	if [[ "$2" == /debug/pprof/* ]]; then
		expect_pprof_error wm "405 for $1 $2"
	else
		grep -q '"error"' "$WORK/wm.body" || fail "405 for $1 $2 is not a JSON error"
	fi
}
# HEAD is served wherever GET is, so Allow names it beside GET.
wrong PUT /profile/cpu "POST, GET, HEAD, DELETE"
wrong PATCH /profile/cpu "POST, GET, HEAD, DELETE"
wrong POST /health "GET, HEAD"
wrong DELETE /metrics "GET, HEAD"
wrong POST /debug/pprof/profile "GET, HEAD"
wrong OPTIONS /health "GET, HEAD"
wrong POST / "GET, HEAD"
pass "unknown routes 404, wrong methods 405 with Allow, JSON (text under /debug/pprof/)"

# --- clients that hang up mid-profile free their session
# Each hangs up once its session runs (curl -m 1 could give up before a
# loaded daemon had started it, and there was nothing to free).
# hang_up PID WHAT: the client PID hangs up once its session runs; the
# session must be gone within 2 s.
hang_up() {
	sessions_running 1
	kill "$1"; wait "$1" 2>/dev/null || true
	for _ in $(seq 20); do
		[ "$(metric profd_sessions_running)" = 0 ] && return 0
		sleep 0.1
	done
	fail "the session of a $2 client that hung up still runs"
}
curl -s -o /dev/null "$BASE/debug/pprof/profile?seconds=30" &
hang_up $! GET
curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
	-d '{"profiler": {"BccProfile": null}, "timeout_seconds": 30}' "$BASE/profile/cpu" &
hang_up $! POST
call st GET /profile/cpu
expect_code st 204 "GET after the POST client hung up"
[ "$(grep -c ' 499 ' "$WORK/serve.err")" -ge 2 ] || fail "no log line for the clients that hung up"
pass "clients hanging up mid-profile: sessions freed at once, logged as 499"

# --- more parallel scrapes than session slots
# 10 s each, so that all 20 overlap even when starting curl takes seconds.
for i in $(seq 20); do
	curl -s -m 60 -o "$WORK/par$i.body" -w '%{http_code}\n' \
		"$BASE/debug/pprof/profile?seconds=10" >"$WORK/par$i.code" &
done
wait_for_scrapes() {
	for i in $(seq 20); do
		for _ in $(seq 600); do
			[ -s "$WORK/par$i.code" ] && break
			sleep 0.1
		done
	done
}
wait_for_scrapes
n200=$(cat "$WORK"/par*.code | grep -c '^200$' || true)
n503=$(cat "$WORK"/par*.code | grep -c '^503$' || true)
[ "$n200" = "$CAP" ] && [ "$n503" = $((20 - CAP)) ] ||
	fail "20 parallel scrapes: $n200 x 200 and $n503 x 503, want $CAP and $((20 - CAP))"
for i in $(seq 20); do
	if grep -q 503 "$WORK/par$i.code"; then
		grep -q '^too many profiling sessions' "$WORK/par$i.body" ||
			fail "503 is not Go pprof's text error: $(cat "$WORK/par$i.body")"
	else
		pprof_check "$WORK/par$i.body" "parallel scrape $i" >/dev/null
	fi
done
pass "20 parallel scrapes: $n200 profiles, $n503 x 503 past the cap of $CAP"

# --- the stalled client was dropped at the request deadline, not before, not never
wait $SLOW_WATCH || true
slow=$(cat "$WORK/slow_s")
awk -v s="$slow" 'BEGIN {exit !(s >= 9 && s <= 16)}' ||
	fail "the stalled client was dropped after $slow s, want 10"
pass "a client stalling mid-request was dropped after $slow s"

# --- still serves a valid profile
go tool pprof -raw -symbolize=none "$BASE/debug/pprof/profile?seconds=1" >"$WORK/after.txt" \
	2>"$WORK/pprof.err" || fail "go tool pprof after all that: $(cat "$WORK/pprof.err")"
grep -q 'hot_a' "$WORK/after.txt" || fail "the profile after all that lacks hot_a"
[ "$(metric profd_sessions_running)" = 0 ] || fail "sessions left running"
pass "still serves a valid profile; no session left running"

# --- SIGTERM: pending clients get what was collected, then exit 0
curl -s -m 30 -D "$WORK/term1.hdr" -o "$WORK/term1.pb.gz" "$BASE/debug/pprof/profile?seconds=30" &
T1=$!
curl -s -m 30 -D "$WORK/term2.hdr" -o "$WORK/term2.pb" -X POST -H 'Content-Type: application/json' \
	-d '{"profiler": {"BccProfile": null}, "timeout_seconds": 30}' "$BASE/profile/cpu" &
T2=$!
sessions_running 2
sleep 1
start=$(date +%s)
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "profd serve exited $? on SIGTERM"
wait $T1 $T2 || fail "a pending client failed on SIGTERM"
[ $(($(date +%s) - start)) -le 10 ] || fail "shutting down took $(($(date +%s) - start)) s"
for t in term1 term2; do
	head -1 "$WORK/$t.hdr" | grep -q ' 200' || fail "$t got $(head -1 "$WORK/$t.hdr") on SIGTERM"
done
pprof_check "$WORK/term1.pb.gz" "scrape cut short by SIGTERM" >/dev/null
pprof_check "$WORK/term2.pb" "POST cut short by SIGTERM" >/dev/null
pass "SIGTERM: both pending clients got their profile, exit 0"
