#!/bin/bash
# What the binary says it is (issue 20, item 3): `profd --version` and
# `profd version` name the version and commit make saw, the link, and the
# libbpf and elfutils it runs with, as pkg-config and readelf tell them; the
# same facts are serve's first log line, /health's "version" object,
# /metrics' profd_build_info gauge and a comment of every profile, CPU,
# heap and off-CPU (served), and record's CPU, heap and off-CPU, as
# `go tool pprof -comments` (docs/operations.md's command) prints them.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
"$PROFD" --version >"$WORK/v1"
"$PROFD" version >"$WORK/v2"
cmp -s "$WORK/v1" "$WORK/v2" || fail "--version and version differ: $(cat "$WORK/v1" "$WORK/v2")"
field() { sed -n "s/^$1: //p" "$WORK/v1"; }
version=$(sed -n 's/^profd //p' "$WORK/v1")
commit=$(field commit)
[ -n "$version" ] && [ -n "$commit" ] || fail "no version or commit: $(cat "$WORK/v1")"
# make passes what git says of the tree it builds; when the test runs in that
# clone (as under make test) the two must agree.
if git -C "$REPO" rev-parse HEAD >/dev/null 2>&1; then
	[ "$commit" = "$(git -C "$REPO" rev-parse HEAD)" ] ||
		fail "commit $commit, but the clone is at $(git -C "$REPO" rev-parse HEAD)"
	# (-dirty aside: a tracked file may change between the build and the test.)
	want=$(git -C "$REPO" describe --always)
	[ "${version%-dirty}" = "$want" ] || fail "version $version, git describe says $want"
fi
if readelf -lW "$PROFD" | grep -q 'Requesting program interpreter'; then link=dynamic; else link=static; fi
field build | grep -q "^$link, sanitizer " || fail "build: '$(field build)', readelf says $link"
# The flags make was given: make dist's link flag exactly when static.
flags=$(field flags)
[ -n "$flags" ] || fail "no flags line: $(cat "$WORK/v1")"
case " $flags " in
*" -static-pie "*) [ "$link" = static ] || fail "flags '$flags' for a $link binary" ;;
*) [ "$link" = dynamic ] || fail "flags '$flags' for a static binary (make dist links -static-pie)" ;;
esac
if [ "$link" = dynamic ]; then
	# The libraries it runs with are the ones installed.
	want=$(pkg-config --modversion libbpf | cut -d. -f1,2)
	[ "$(field libbpf)" = "$want" ] || fail "libbpf $(field libbpf), pkg-config says $want"
	want=$(pkg-config --modversion libdw)
	[ "$(field elfutils)" = "$want" ] || fail "elfutils $(field elfutils), pkg-config says $want"
fi
[[ "$(field libbpf)" =~ ^[0-9]+\.[0-9]+$ ]] || fail "libbpf version '$(field libbpf)'"
[[ "$(field elfutils)" =~ ^0\.[0-9]+$ ]] || fail "elfutils version '$(field elfutils)'"
"$PROFD" version extra 2>/dev/null && fail "version took an argument"
"$PROFD" --help | grep -q '^  version ' || fail "--help does not list version"
pass "--version: $version, commit $commit, $link, flags '$flags', libbpf $(field libbpf), elfutils $(field elfutils)"

# The daemon: its first log line, /health, /metrics, and profiles' comments.
line="version $version (commit $commit, $link, "
"$BUILD/tests/heap_target" 60 >/dev/null &
TARGET=$!
PIDS_TO_KILL+=("$TARGET")
serve "$(free_port 17930)" --heap --pid "$TARGET" --heap-sample-bytes 4096
# Outside journald a line starts with its time and level (t_logs.sh).
first=$(head -1 "$WORK/serve.err" | sed -E 's/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z [a-z]+ //')
[ "$first" = "profd: $line${first#"profd: $line"}" ] || fail "first log line: '$first', want 'profd: $line...'"
call health GET /health
expect_code health 200 /health
python3 - "$WORK/health.body" "$version" "$commit" "$link" "$(field libbpf)" "$(field elfutils)" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
v = h["version"]
want = dict(zip(["version", "commit", "link", "libbpf", "elfutils"], sys.argv[2:]))
for k, w in want.items():
    assert v[k] == w, f"/health version.{k} = {v.get(k)!r}, want {w!r}"
assert v["sanitizer"] and v["compiler"], v
assert h["status"] == "ok", h
PY
call metrics GET /metrics
want="profd_build_info{version=\"$version\",commit=\"$commit\",link=\"$link\","
grep -qF "$want" "$WORK/metrics.body" || fail "/metrics: no $want...: $(grep build_info "$WORK/metrics.body")"
[ "$(grep -c '^profd_build_info{.*} 1$' "$WORK/metrics.body")" = 1 ] ||
	fail "profd_build_info is not one gauge of 1: $(grep build_info "$WORK/metrics.body")"
grep -q '^# TYPE profd_build_info gauge$' "$WORK/metrics.body" || fail "profd_build_info has no TYPE gauge"
pass "serve: first log line, /health's version object and profd_build_info say $version"

call cpu GET "/debug/pprof/profile?seconds=1"
expect_code cpu 200 "CPU profile"
call heap GET "/debug/pprof/heap"
expect_code heap 200 "heap profile"
call offcpu GET "/debug/pprof/offcpu?seconds=1"
expect_code offcpu 200 "off-CPU profile"
# record on its own, as a person runs it: the daemon stopped first.
kill "$SERVE_PID"
wait "$SERVE_PID" || true
"$PROFD" record --pid "$TARGET" --seconds 1 -o "$WORK/rec.pb.gz" 2>"$WORK/record.err"
"$PROFD" record --heap --pid "$TARGET" --seconds 1 -o "$WORK/recheap.pb.gz" 2>"$WORK/recheap.err"
"$PROFD" record --off-cpu --pid "$TARGET" --seconds 1 -o "$WORK/recoff.pb.gz" 2>"$WORK/recoff.err"
# go tool pprof -comments prints one comment a line, in the profile's order.
for p in cpu.body heap.body offcpu.body rec.pb.gz recheap.pb.gz recoff.pb.gz; do
	go tool pprof -comments "$WORK/$p" >"$WORK/$p.comments" 2>"$WORK/$p.pprof.err" ||
		fail "go tool pprof -comments $p: $(cat "$WORK/$p.pprof.err")"
	n=$(grep -cF "profd: $line" "$WORK/$p.comments" || true)
	[ "$n" = 1 ] || fail "$p: $n build comments, want 1: $(cat "$WORK/$p.comments")"
	# Not the first: that one is the profile's title (the SVG's subtitle).
	head -1 "$WORK/$p.comments" | grep -qF "profd: $line" &&
		fail "$p: the build line is the first comment"
done
pass "the CPU, heap and off-CPU profiles served and record's CPU, heap and off-CPU profiles carry" \
	"'profd: $line...' as a comment (go tool pprof -comments)"
