#!/bin/bash
# The profiling RFC's GET /profile/cpu and /profile/heap (issue 22, defect
# 4), and the HTTP conventions of Go's net/http/pprof: a GET with format,
# seconds, frequency or force takes a profile (a bare GET stays compute_ctl's
# status request); force=true ends the running profile, whose client gets
# what was sampled so far; errors on /debug/pprof/* are the text the pprof
# tool prints; /debug/pprof/ lists the profiles; every reply says nosniff;
# downloads are named.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"
command -v protoc >/dev/null || { echo "skip: no protoc (make test-deps)"; exit 77; }

"$BUILD/tests/inline_target" 300 >/dev/null &
BURN=$!
PIDS_TO_KILL+=("$BURN")
serve "$(free_port 18300)" --pid "$BURN" --exe heap_target --heap --heap-sample-bytes 65536
POST=(-H 'Content-Type: application/json')

# A top-level integer field of a gzipped profile (duration_nanos, period),
# as protoc decodes it (go tool pprof -raw prints durations cut to 4 chars).
PROTO_DIR=/usr/share/gocode/src/github.com/google/pprof/proto
field() { # FILE FIELD
	gzip -dc "$1" | protoc --decode=perftools.profiles.Profile --proto_path="$PROTO_DIR" \
		profile.proto | sed -n "s/^$2: //p"
}
seconds_of() { # FILE: duration_nanos in seconds
	python3 -c 'import sys; print(f"{int(sys.argv[1]) / 1e9:.2f}")' "$(field "$1" duration_nanos)"
}
# The samples the /profile/cpu session running has taken so far (/sessions).
route_samples() {
	curl -s -m 5 "$BASE/sessions" | python3 -c '
import json, sys
s = [x for x in json.load(sys.stdin)["sessions"] if x["route"] == "/profile/cpu"]
print(s[0]["samples"] if s else -1)'
}
# Wait until the /profile/cpu session has at least one sample.
wait_sampling() {
	for _ in $(seq 300); do
		[ "$(route_samples)" -ge 1 ] && return 0
		sleep 0.1
	done
	fail "the /profile/cpu session took no sample in 30 s"
}
status_of() { head -1 "$WORK/$1.hdr" | awk '{print $2}'; }

# --- a bare GET is still the status request
call idle GET /profile/cpu
expect_code idle 204 "a bare GET when idle"
call idle GET '/profile/cpu?foo=bar'
expect_code idle 204 "a GET with only an unknown parameter"
pass "bare GET /profile/cpu: 204, the compute contract's status"

# --- the RFC's defaults: 5 s at 99 Hz, gzipped pprof, a file name
call def GET '/profile/cpu?format=pprof'
expect_code def 200 "GET /profile/cpu?format=pprof"
[ "$(header def Content-Type)" = application/octet-stream ] || fail "Content-Type $(header def Content-Type)"
[ "$(header def Content-Disposition)" = 'attachment; filename="profile.pb.gz"' ] ||
	fail "Content-Disposition: $(header def Content-Disposition)"
[ "$(header def X-Content-Type-Options)" = nosniff ] || fail "no nosniff on a profile"
is_gzip "$WORK/def.body" || fail "the profile is not gzipped"
n=$(pprof_check "$WORK/def.body" "the default GET profile")
dur=$(seconds_of "$WORK/def.body")
period=$(field "$WORK/def.body" period)
python3 -c 'import sys; d = float(sys.argv[1]); assert 4.9 <= d <= 6, d' "$dur" ||
	fail "the default profile lasted $dur s, want 5"
[ "$period" = 10101010 ] || fail "period $period, want 10101010 (99 Hz)"
pass "GET /profile/cpu?format=pprof: $n samples over $dur s at 99 Hz, profile.pb.gz"

call svg GET '/profile/cpu?seconds=1&format=svg&frequency=49'
expect_code svg 200 "format=svg"
[[ "$(header svg Content-Type)" == image/svg+xml* ]] || fail "svg Content-Type $(header svg Content-Type)"
[ "$(header svg Content-Disposition)" = 'inline; filename="profile.svg"' ] ||
	fail "svg Content-Disposition: $(header svg Content-Disposition)"
grep -q '<svg' "$WORK/svg.body" && grep -q 'hot_a' "$WORK/svg.body" ||
	fail "the SVG has no hot_a: $(head -c 300 "$WORK/svg.body")"
xmllint --noout "$WORK/svg.body" || fail "the SVG is not well-formed XML"
pass "GET /profile/cpu?seconds=1&format=svg: a flamegraph with hot_a"

# --- absurd parameters: 400 naming what was wrong, JSON on this route
for q in seconds=0 seconds=3601 seconds=-1 seconds=5s frequency=0 frequency=1001 frequency=abc \
	format=png format=jemalloc force=yes force= 'seconds=1&seconds=2' labels=bogus; do
	call bad GET "/profile/cpu?$q"
	expect_code bad 400 "GET /profile/cpu?$q"
	grep -q '"error"' "$WORK/bad.body" || fail "?$q: not a JSON error: $(body bad)"
done
pass "absurd parameters: 400 with a JSON error"

# --- one at a time: a second GET is 409, a POST too; force=true takes over
# An hour long: it ends when forced out, or the client gives up after 10 min.
curl -s -m 600 -D "$WORK/a.hdr" -o "$WORK/a.pb" "$BASE/profile/cpu?seconds=3600" &
A=$!
wait_sampling
call st GET /profile/cpu
expect_code st 200 "status while a GET profile runs"
expect_body st '"Profiling is currently in progress."' "status while a GET profile runs"
call second GET '/profile/cpu?seconds=1'
expect_code second 409 "a second GET without force"
grep -q 'force=true' "$WORK/second.body" || fail "the 409 does not mention force=true: $(body second)"
call post POST /profile/cpu "${POST[@]}" -d '{"profiler": {"Perf": null}, "timeout_seconds": 1}'
expect_code post 409 "a POST while a GET profile runs"
expect_body post '"Profiling is already in progress."' "a POST while a GET profile runs"
had=$(route_samples)
call b GET '/profile/cpu?seconds=1&force=true'
expect_code b 200 "GET with force=true"
wait $A
[ "$(status_of a)" = 200 ] || fail "the forced-out GET got $(status_of a), want 200"
n=$(pprof_check "$WORK/a.pb" "the forced-out profile")
[ "$n" -ge "$had" ] || fail "the forced-out profile has $n samples, it had $had when forced"
dur=$(seconds_of "$WORK/a.pb")
python3 -c 'import sys; assert float(sys.argv[1]) < 3000, sys.argv[1]' "$dur" ||
	fail "the forced-out profile lasted $dur s"
pprof_check "$WORK/b.body" "the forcing profile" >/dev/null
call idle GET /profile/cpu
expect_code idle 204 "status after both"
grep -q 'force=true: the /profile/cpu profile running ends' "$WORK/serve.err" ||
	fail "no log line for the forced end"
pass "force=true: the running GET answered 200 with its $n samples ($dur s of 3600), the new one ran"

# compute_ctl's POST is the route's profile too: force ends it the same way.
curl -s -m 600 -X POST "${POST[@]}" -D "$WORK/p.hdr" -o "$WORK/p.pb" \
	-d '{"profiler": {"BccProfile": null}, "timeout_seconds": 60, "archive": false}' \
	"$BASE/profile/cpu" &
P=$!
wait_sampling
call f GET '/profile/cpu?seconds=1&force=true&format=svg'
expect_code f 200 "force over a POST"
wait $P
[ "$(status_of p)" = 200 ] || fail "the forced-out POST got $(status_of p), want 200"
! is_gzip "$WORK/p.pb" || fail "the forced-out POST (archive false) is gzipped"
pprof_check "$WORK/p.pb" "the forced-out POST" >/dev/null
dur=$(protoc --decode=perftools.profiles.Profile --proto_path="$PROTO_DIR" profile.proto \
	<"$WORK/p.pb" | sed -n 's/^duration_nanos: //p' | awk '{printf "%.2f", $1 / 1e9}')
python3 -c 'import sys; assert float(sys.argv[1]) < 59, sys.argv[1]' "$dur" ||
	fail "the forced-out POST lasted $dur s: it was not ended by force=true"
[ "$(grep -c 'force=true: the /profile/cpu profile running ends' "$WORK/serve.err")" = 2 ] ||
	fail "no log line for the second forced end"
pass "force=true over compute_ctl's POST: it answered 200 with what it had"

# DELETE cancels a GET profile as it cancels a POST: 204.
curl -s -m 600 -D "$WORK/d.hdr" -o /dev/null "$BASE/profile/cpu?seconds=3600" &
D=$!
wait_sampling
call del DELETE /profile/cpu
expect_code del 200 "DELETE during a GET profile"
wait $D
[ "$(status_of d)" = 204 ] || fail "the cancelled GET got $(status_of d), want 204"
pass "DELETE ends a GET profile: 200, and the GET 204"

# --- the heap, the RFC's way
# It allocates when told, once its probes are in: "now" raced the daemon's
# exec-time probes on a loaded machine.
"$BUILD/tests/heap_target" wait 16 >"$WORK/ht.out" &
HT=$!
PIDS_TO_KILL+=("$HT")
# Two processes have probes then: BURN (a --pid target) and heap_target.
for _ in $(seq 300); do
	grep -q ready "$WORK/ht.out" && [ "$(metric profd_heap_attachments)" -ge 2 ] && break
	sleep 0.1
done
[ "$(metric profd_heap_attachments)" -ge 2 ] ||
	fail "heap_target got no heap probes in 30 s ($(metric profd_heap_attachments) processes have them)"
kill -USR1 "$HT"
for _ in $(seq 300); do
	grep -q done "$WORK/ht.out" && break
	sleep 0.1
done
grep -q done "$WORK/ht.out" || fail "heap_target did not finish allocating"
call hp GET '/profile/heap?format=pprof'
expect_code hp 200 "GET /profile/heap?format=pprof"
[ "$(header hp Content-Disposition)" = 'attachment; filename="heap.pb.gz"' ] ||
	fail "heap Content-Disposition: $(header hp Content-Disposition)"
python3 - "$WORK/hp.body" <<'PY' || fail "the heap profile lacks heap_target's retained sites"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
fns = {f for s in p.samples for f in p.frames(s) if f}
assert "retain_malloc" in fns, sorted(fns)[:30]
PY
call hs GET '/profile/heap?format=svg'
expect_code hs 200 "GET /profile/heap?format=svg"
grep -q 'retain_malloc' "$WORK/hs.body" || fail "the heap SVG has no retain_malloc"
[ "$(header hs Content-Disposition)" = 'inline; filename="heap.svg"' ] ||
	fail "heap svg Content-Disposition: $(header hs Content-Disposition)"
call hj GET '/profile/heap?format=jemalloc'
expect_code hj 400 "format=jemalloc"
grep -q '"error":"format=jemalloc is not served' "$WORK/hj.body" || fail "jemalloc: $(body hj)"
for path in heap allocs; do
	call gh GET "/debug/pprof/$path"
	expect_code gh 200 "/debug/pprof/$path"
	[ "$(header gh Content-Disposition)" = "attachment; filename=\"$path\"" ] ||
		fail "/debug/pprof/$path Content-Disposition: $(header gh Content-Disposition)"
done
pass "GET /profile/heap: pprof (heap.pb.gz) and svg; jemalloc 400; Go's file names on /debug/pprof/"

# --- Go pprof's error form on /debug/pprof/*, and what the pprof tool prints
call e GET '/debug/pprof/profile?seconds=0'
expect_code e 400 "seconds=0"
expect_pprof_error e "seconds=0"
[ "$(body e)" = "seconds must be an integer 1..3600" ] || fail "the error text: $(body e)"
call e GET '/debug/pprof/nothing'
expect_code e 404 "an unknown /debug/pprof/ path"
expect_pprof_error e "an unknown /debug/pprof/ path"
go tool pprof -raw "$BASE/debug/pprof/profile?seconds=1&frequency=5000" >/dev/null 2>"$WORK/gp.err" &&
	fail "go tool pprof fetched a profile at 5000 Hz"
grep -q 'server response: 400 Bad Request - frequency must be an integer 1..1000' "$WORK/gp.err" ||
	fail "go tool pprof did not print profd's error: $(cat "$WORK/gp.err")"
go tool pprof -raw "$BASE/debug/pprof/heap?labels=nope" >/dev/null 2>"$WORK/gp.err" &&
	fail "go tool pprof fetched a heap profile with an unknown label"
grep -q 'server response: 400 Bad Request - labels: unknown label "nope"' "$WORK/gp.err" ||
	fail "go tool pprof did not print profd's error: $(cat "$WORK/gp.err")"
pass "errors on /debug/pprof/*: text/plain with X-Go-Pprof: 1; go tool pprof prints them"

# --- the index, as Go's
call ix GET /debug/pprof/
expect_code ix 200 "/debug/pprof/"
[ "$(header ix Content-Type)" = 'text/html; charset=utf-8' ] || fail "index Content-Type $(header ix Content-Type)"
xmllint --html --noout "$WORK/ix.body" 2>/dev/null || fail "the index is not HTML"
for p in allocs heap offcpu profile fgprof; do
	link=$p
	[ $p = fgprof ] && link=../fgprof	# Go's fgprof's path: /debug/fgprof
	grep -q "<a href='$link'>$p</a>" "$WORK/ix.body" || fail "the index does not link $p"
	grep -q "<li><div class=profile-name>$p: </div> [A-Z]" "$WORK/ix.body" ||
		fail "the index does not describe $p"
done
# Each link, resolved against the index as a browser would, is served.
for href in $(grep -o "href='[^']*'" "$WORK/ix.body" | sed "s/href='//; s/'$//; s/&amp;/\\&/g"); do
	# The timed profiles (CPU, off-CPU, wall-clock) for 1 s, not their 10 or 30.
	[[ "$href" =~ ^(profile|offcpu|../fgprof) ]] && href="${href/seconds=10/seconds=1}"
	[[ "$href" =~ ^(profile|offcpu|../fgprof)$ ]] && href="$href?seconds=1"
	code=$(curl -s -m 30 -o /dev/null -w '%{http_code}' "$BASE/debug/pprof/$href")
	[ "$code" = 200 ] || fail "the index links $href, which answers $code"
done
call rd GET /debug/pprof
expect_code rd 301 "/debug/pprof"
[ "$(header rd Location)" = /debug/pprof/ ] || fail "/debug/pprof redirects to $(header rd Location)"
pass "/debug/pprof/ lists allocs, heap, offcpu, profile and fgprof with descriptions; each link is served"

# --- nosniff on every reply: successes, errors of both forms, the page
for path in / /health /metrics /sessions /profile/cpu /debug/pprof/ /debug/pprof/x /nope; do
	call ns GET "$path"
	[ "$(header ns X-Content-Type-Options)" = nosniff ] || fail "GET $path ($CODE): no nosniff"
done
call ns POST /health
[ "$(header ns X-Content-Type-Options)" = nosniff ] || fail "a 405: no nosniff"
pass "X-Content-Type-Options: nosniff on every reply"
