#!/bin/bash
# GET /debug/pprof/profile, the endpoint `go tool pprof` and Grafana Alloy's
# pyroscope.scrape read: a real client fetches and parses a profile from the
# daemon; parameters are checked the way Alloy sends them (repeats allowed
# when equal); bad values are 400; folded is text (svg: t_flame_svg.sh).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

"$BUILD/tests/inline_target" 120 >/dev/null &
BURN=$!
PIDS_TO_KILL+=("$BURN")
PORT=$(free_port 17140)
serve "$PORT" --pid "$BURN"

# --- a real client, straight from the daemon
start=$(date +%s%N)
go tool pprof -raw -symbolize=none "$BASE/debug/pprof/profile?seconds=2" >"$WORK/raw.txt" \
	2>"$WORK/pprof.err" || { cat "$WORK/pprof.err" >&2; fail "go tool pprof could not fetch"; }
ms=$((($(date +%s%N) - start) / 1000000))
[ "$ms" -ge 1900 ] || fail "a 2 s profile came back after $ms ms"
python3 -c '
import sys, pprof_raw
p = pprof_raw.Profile(open(sys.argv[1]).read())
names = {f for s in p.samples for f in p.frames(s)}
assert p.total() > 0, "no samples"
assert "hot_a" in names and "hot_b" in names, sorted(n for n in names if n)[:20]
assert p.period == 10101010, p.period  # 99 Hz
' "$WORK/raw.txt" || fail "go tool pprof -raw output: $(head -30 "$WORK/raw.txt")"
pass "go tool pprof -raw read a 2 s profile from the daemon ($ms ms)"

# --- headers: Alloy >= 1.11 takes only application/octet-stream
call scrape GET "/debug/pprof/profile?seconds=1&frequency=49"
expect_code scrape 200 "scrape"
[ "$(header scrape Content-Type)" = application/octet-stream ] ||
	fail "Content-Type: $(header scrape Content-Type)"
is_gzip "$WORK/scrape.body" || fail "the scrape is not gzipped"
n=$(pprof_check "$WORK/scrape.body" "1 s at 49 Hz")
pass "scrape: 200, application/octet-stream, gzipped pprof, $n samples"

# --- Alloy's parameters: seconds repeated (alloy#3026), force, unknown ones
call rep GET "/debug/pprof/profile?seconds=1&seconds=1&force=true&frequency=19&frequency=19&foo=bar"
expect_code rep 200 "identical repeats, force and an unknown parameter"
pprof_check "$WORK/rep.body" "identical repeats" >/dev/null
call conf GET "/debug/pprof/profile?seconds=1&seconds=2"
expect_code conf 400 "conflicting seconds"
expect_pprof_error conf "conflicting seconds"
grep -q 'seconds' "$WORK/conf.body" || fail "conflict error: $(body conf)"
call conf GET "/debug/pprof/profile?seconds=1&frequency=19&frequency=99"
expect_code conf 400 "conflicting frequency"
pass "identical repeats accepted, conflicting ones 400"

for q in seconds=0 seconds=3601 seconds=abc seconds=1.5 seconds= frequency=0 frequency=1001 \
	frequency=-5 format=png; do
	call badq GET "/debug/pprof/profile?$q"
	expect_code badq 400 "?$q"
	expect_pprof_error badq "?$q"
done
pass "out-of-range or malformed parameters: 400 with Go pprof's text error"

call folded GET "/debug/pprof/profile?seconds=1&format=folded"
expect_code folded 200 "folded"
[[ "$(header folded Content-Type)" == text/plain* ]] || fail "folded Content-Type: $(header folded Content-Type)"
grep -q '^inline_target;.*hot_a.* [0-9][0-9]*$' "$WORK/folded.body" ||
	fail "folded has no inline_target...hot_a N line: $(head -5 "$WORK/folded.body")"
pass "format=folded: text/plain collapsed stacks"

# --- downloads named as Go's net/http/pprof names them; flamegraphs and
# folded stacks inline, under a name that says what they are
call svg GET "/debug/pprof/profile?seconds=1&format=svg"
expect_code svg 200 "svg"
for c in 'scrape|attachment; filename="profile"' 'folded|inline; filename="profile.txt"' \
	'svg|inline; filename="profile.svg"'; do
	[ "$(header "${c%%|*}" Content-Disposition)" = "${c#*|}" ] ||
		fail "${c%%|*}: Content-Disposition '$(header "${c%%|*}" Content-Disposition)', want '${c#*|}'"
done
pass "Content-Disposition: profile (pprof), profile.txt (folded), profile.svg (svg)"

# --- the issue's own case: go tool pprof against a 409 (heap tracking is
# off) prints profd's text, not the status line alone
for path in heap allocs; do
	call h409 GET "/debug/pprof/$path"
	expect_code h409 409 "/debug/pprof/$path without --heap"
	expect_pprof_error h409 "/debug/pprof/$path without --heap"
done
go tool pprof -raw "$BASE/debug/pprof/heap" >/dev/null 2>"$WORK/gp409.err" &&
	fail "go tool pprof fetched a heap profile from a daemon without --heap"
grep -q 'server response: 409 Conflict - heap profiling is off: start the daemon with `profd serve --heap`' \
	"$WORK/gp409.err" || fail "go tool pprof did not print profd's 409: $(cat "$WORK/gp409.err")"
pass "go tool pprof against a 409 prints profd's text: $(grep -o '409 Conflict - .*' "$WORK/gp409.err" | head -c 80)..."

kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "profd serve exited $? on SIGTERM"

# --- --config: its targets are the default; --listen overrides its listen
P1=$(free_port 17150)
P2=$(free_port $((P1 + 1)))
printf '{"listen": "127.0.0.1:%s", "exes": ["inline_target"]}\n' "$P1" >"$WORK/config.json"
serve "$P2" --config "$WORK/config.json"
curl -s -m 2 -o /dev/null "http://127.0.0.1:$P1/health" && fail "--listen did not override the config's listen"
call cfg GET "/debug/pprof/profile?seconds=1&format=folded"
expect_code cfg 200 "scrape with config targets"
[ -s "$WORK/cfg.body" ] || fail "no samples of the config's exe"
! grep -qv '^inline_target;' "$WORK/cfg.body" ||
	fail "config targets exes [inline_target], got: $(grep -v '^inline_target;' "$WORK/cfg.body" | head -3)"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "profd serve exited $? on SIGTERM"
echo '{"listen": "127.0.0.1:7117", "pid": [1]}' >"$WORK/bad.json"
if "$PROFD" serve --config "$WORK/bad.json" 2>"$WORK/bad.err"; then fail "a config with a typo was accepted"; fi
grep -q '"pid"' "$WORK/bad.err" || fail "the config error does not name the key: $(cat "$WORK/bad.err")"
if "$PROFD" serve --listen nonsense 2>"$WORK/bad.err"; then fail "--listen nonsense was accepted"; fi
pass "--config targets are the default, --listen overrides it, unknown keys and bad addresses refused"
