#!/bin/bash
# /debug/pprof/heap and /allocs as Go's net/http/pprof serves them:
# ?debug=1, the legacy text form (runtime/pprof's writeHeapInternal), which
# go tool pprof reads to the same totals as the protobuf; ?seconds=N, the
# change over N seconds (serveDeltaProfile), which go tool pprof reads and
# which holds what was allocated in that window only; and the two together
# refused as Go refuses them.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

"$BUILD/tests/heap_target" wait 8192 >"$WORK/ht.out" &
HT=$!
PIDS_TO_KILL+=($HT)
serve "$(free_port 17560)" --heap --exe heap_target
kill -USR1 $HT
for _ in $(seq 300); do
	grep -q churning "$WORK/ht.out" && break
	sleep 0.1
done
grep -q churning "$WORK/ht.out" || fail "heap_target did not start churning"

# A delta taken while churn() runs: its base is read after the retain_*
# allocations, so only churn's are in it, and not all of them.
call delta GET '/debug/pprof/allocs?seconds=2'
expect_code delta 200 "allocs?seconds=2"
for _ in $(seq 600); do
	grep -q done "$WORK/ht.out" && break
	sleep 0.1
done
grep -q done "$WORK/ht.out" || fail "heap_target did not finish"
call full GET /debug/pprof/allocs
expect_code full 200 "allocs"
call text GET '/debug/pprof/heap?debug=1'
expect_code text 200 "heap?debug=1"
[ "$(header text Content-Type)" = "text/plain; charset=utf-8" ] ||
	fail "heap?debug=1: Content-Type $(header text Content-Type)"
# heap_target is idle now: a delta of nothing.
call idle GET '/debug/pprof/heap?seconds=1'
expect_code idle 200 "heap?seconds=1 while idle"

python3 - "$WORK/delta.body" "$WORK/full.body" "$WORK/text.body" "$WORK/idle.body" <<'PY'
import re, sys, pprof_raw
delta, full, text, idle = (pprof_raw.load(f) for f in sys.argv[1:5])

def by_fn(p, idx, fn):
    return sum(s["values"][idx] for s in p.samples if fn in p.frames(s))

# The delta: churn's allocations in the window, none of retain_*'s.
dc, fc = by_fn(delta, 1, "churn"), by_fn(full, 1, "churn")
assert 0 < dc < fc, f"churn in the 2 s delta {dc}, in all {fc}"
for fn in ("retain_malloc", "retain_calloc", "retain_memalign"):
    assert by_fn(delta, 1, fn) == 0, f"{fn} in a delta taken after it ran"
    assert by_fn(full, 1, fn) > 0, f"{fn} not in the allocs profile"
assert any("the change over the last" in c for c in delta.comments), delta.comments
assert not idle.samples, f"a delta over an idle second holds {len(idle.samples)} samples"

# The text form: Go's layout, and go tool pprof's reading of it (it scales
# the sampled counts by the header's rate) gives the protobuf's totals.
raw = open(sys.argv[3]).read().splitlines()
assert re.fullmatch(r"heap profile: \d+: \d+ \[\d+: \d+\] @ heap/1048576", raw[0]), raw[0]
recs = [l for l in raw if re.fullmatch(r"\d+: \d+ \[\d+: \d+\] @( 0x[0-9a-f]+)+", l)]
assert len(recs) >= 4, raw[:10]
assert any(re.fullmatch(r"#\t0x[0-9a-f]+\tretain_calloc\t\S*heap_target\.c:\d+", l)
           for l in raw), [l for l in raw if l.startswith("#")][:10]
assert text.sample_types[:4] == ["alloc_objects/count", "alloc_space/bytes",
                                 "inuse_objects/count", "inuse_space/bytes"], text.sample_types
for i, name in enumerate(("alloc_objects", "alloc_space", "inuse_objects", "inuse_space")):
    t, f = text.total(i), full.total(i)
    assert abs(t - f) <= max(f // 1000, 1), f"{name}: text {t}, protobuf {f}"
print(f"ok: allocs?seconds=2 during the churn holds {dc / 1048576:.0f} of its "
      f"{fc / 1048576:.0f} MiB and nothing else; an idle delta is empty; heap?debug=1 is Go's "
      f"text form ({len(recs)} records), read by go tool pprof to the protobuf's totals")
PY

call both GET '/debug/pprof/heap?debug=1&seconds=2'
expect_code both 400 "debug and seconds together"
grep -q "seconds and debug params are incompatible" "$WORK/both.body" ||
	fail "debug with seconds: $(body both)"
call baddebug GET '/debug/pprof/heap?debug=x'
expect_code baddebug 400 "debug=x"
pass "debug=1 with seconds, and debug=x, are 400s"

# Grafana Alloy's memory scrape given seconds= (its scrape block's params
# carry a delta profile's seconds, grafana/alloy targetsFromGroup): served
# as asked, as Go serves it, and the log says why and what to change, once
# (curl's deltas above said nothing).
for _ in 1 2; do
	call alloy GET '/debug/pprof/allocs?seconds=1&frequency=19&labels=default' \
		-A 'Alloy/v1.11.0 (linux; binary)'
	expect_code alloy 200 "Alloy's allocs?seconds=1"
done
n=$(grep -c 'Grafana Alloy asked /debug/pprof/allocs for seconds=1: .*leave params out of a block' \
	"$WORK/serve.err")
[ "$n" = 1 ] || fail "the Alloy seconds= warning was logged $n times, want 1: $(grep -i alloy "$WORK/serve.err")"
pass "an Alloy heap scrape with seconds=: served as a delta, and one warning naming the fix"
