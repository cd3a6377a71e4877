#!/bin/bash
# What the binary says it is (issue 20, item 3): `profd --version` and
# `profd version` name the version and commit make saw, the link, and the
# libbpf and elfutils it runs with, as pkg-config and readelf tell them; the
# same facts are serve's first log line, /health's "version" object,
# /metrics' profd_build_info gauge and a comment of every profile, CPU and
# heap, as go tool pprof reads it.
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
pass "--version: $version, commit $commit, $link, libbpf $(field libbpf), elfutils $(field elfutils)"

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
for p in cpu heap; do
	python3 - "$WORK/$p.body" "$line" "$p" <<'PY' || fail "$p profile: no build comment"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
hit = [i for i, c in enumerate(p.comments) if c.startswith("profd: " + sys.argv[2])]
assert len(hit) == 1, f"{sys.argv[3]}: comments {p.comments}"
assert hit[0] > 0, "the build line must not be the first comment (the SVG's subtitle)"
PY
done
"$PROFD" record --pid "$TARGET" --seconds 1 -o "$WORK/rec.pb.gz" 2>"$WORK/record.err"
python3 - "$WORK/rec.pb.gz" "$line" <<'PY' || fail "record's profile: no build comment"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
assert any(c.startswith("profd: " + sys.argv[2]) for c in p.comments), p.comments
PY
pass "the CPU and heap profiles served and record's profile carry 'profd: $line...' as a comment"
