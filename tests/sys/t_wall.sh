#!/bin/bash
# Wall-clock profiles (issue 24): on-CPU and off-CPU time per stack in one
# profile, at GET /debug/fgprof (where Alloy's profile.fgprof looks) and
# through `profd record --wall`.  wall_target's two threads alternate, each
# under its own functions, burning CPU and sleeping: wall_busy 60 ms of CPU
# then a 20 ms nap, wall_sleepy 15 ms then 60 ms; each times its phases in
# wall time.  On this shared 2-CPU machine a burn phase lasts longer than
# its CPU time (the thread waits for a CPU): a wall-clock profile counts
# that wait too (a preempted switch-out, sampled as blocked ones are), so
# the truth is the phases' wall time.  Asserted: each phase's share of its
# thread's time within 10 points of the truth, and each thread's total time
# within 10% of its life, both in the profile's window (the workload
# records when each phase ran): all of it when the workload runs inside the
# window (record), the window's part when it runs across it (the scrape).  The scrape's bad parameters get the CPU route's 400s.  The
# off-CPU half runs at a 1 ms period (--off-cpu-period-us 1000): the naps
# and most waits for a CPU are kept whole, so what is asserted is the
# wall-clock accounting, not the variance of sampling by duration, which
# t_offcpu.sh bounds at the default period.  So many kept switches, each
# reserving a full sample's room in the ring (~43 KiB), can fill the
# default 1 MiB ring while a loaded machine delays the daemon's drain
# (lost, and said in the comments): the ring is 8 MiB here.
export PROFD_RING_KB=8192
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v go >/dev/null || { echo "skip: no go (make test-deps)"; exit 77; }

TARGET=$BUILD/tests/wall_target

# check PROFILE TRUTH: each phase's share of its thread's time in the
# profile against what the workload timed in the profile's window (its
# Time and Duration: the whole run when it ran inside, its part when it ran
# across), and each thread's total against its life in that window.
check() {
	python3 - "$1" "$2" <<'PY' || fail "wall-clock times of $1"
import sys, pprof_raw
from collections import defaultdict
p = pprof_raw.load(sys.argv[1])
assert p.time_ns and p.duration_ns, (p.time_ns, p.duration_ns)
t0, t1 = p.time_ns, p.time_ns + p.duration_ns
truth = defaultdict(int)
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "span":
        truth[f[1]] += max(0, min(int(f[3]), t1) - max(int(f[2]), t0))
assert p.sample_types == ["samples/count", "time/nanoseconds"], p.sample_types
threads = {"wall_busy": ("busy_burn", "busy_sleep"),
           "wall_sleepy": ("sleepy_burn", "sleepy_sleep")}
for thread, phases in threads.items():
    mine = [s for s in p.samples if s["labels"].get("thread_name") == thread]
    total = sum(s["values"][1] for s in mine)
    life = truth[thread]
    err = 100.0 * (total - life) / life
    print(f"{thread}: {total / 1e9:.3f} s in the profile, lived {life / 1e9:.3f} s of its "
          f"{p.duration_ns / 1e9:.2f} s ({err:+.1f}%)")
    assert abs(err) <= 10, f"{thread}: {err:+.1f}% off its life"
    # samples/count is time over the period: the same flamegraph.
    n = sum(s["values"][0] for s in mine)
    assert abs(n * p.period - total) <= 0.1 * total, f"{thread}: {n} samples for {total} ns"
    whole = sum(truth[f] for f in phases)
    for fn in phases:
        got = 100.0 * sum(s["values"][1] for s in mine if fn in p.frames(s)) / total
        want = 100.0 * truth[fn] / whole
        print(f"  {fn}: {got:.1f}% of its time in the profile, {want:.1f}% timed")
        assert abs(got - want) <= 10, f"{fn}: {got:.1f}%, timed {want:.1f}%"
assert any("wall-clock time" in c for c in p.comments), p.comments
PY
}

# go tool pprof -top reads it, and shows time.
check_top() {
	go tool pprof -top -symbolize=none "$1" >"$WORK/top.txt" 2>&1 ||
		fail "go tool pprof -top cannot read $1: $(head -3 "$WORK/top.txt")"
	grep -q '^Type: time' "$WORK/top.txt" || fail "-top: not a wall-clock profile: $(head -5 "$WORK/top.txt")"
	grep -q busy_burn "$WORK/top.txt" || fail "-top does not show busy_burn"
}

# 1. profd record --wall, the workload inside its window.
"$PROFD" record --wall --heap --seconds 1 -o /dev/null 2>"$WORK/bad.err" && fail "--wall --heap was taken"
grep -q -- '--wall' "$WORK/bad.err" || fail "$(cat "$WORK/bad.err")"
start_record --wall --off-cpu-period-us 1000 --seconds 600 --exe wall_target \
	--labels default,thread_name -o "$WORK/rec.pb.gz"
"$TARGET" 4 >"$WORK/truth1.txt"
tail -1 "$WORK/truth1.txt" | grep -qx done || fail "wall_target did not finish"
stop_record
check "$WORK/rec.pb.gz" "$WORK/truth1.txt"
check_top "$WORK/rec.pb.gz"
pass "profd record --wall: each phase's share within 10 points, each thread's time within 10% of its life"

start_record --wall --off-cpu-period-us 1000 --seconds 600 --exe wall_target --format folded \
	-o "$WORK/rec.folded"
"$TARGET" 2 >/dev/null
stop_record
grep -q 'busy_sleep' "$WORK/rec.folded" && grep -q 'busy_burn' "$WORK/rec.folded" ||
	fail "folded: no busy_burn or busy_sleep: $(head -3 "$WORK/rec.folded")"
start_record --wall --off-cpu-period-us 1000 --seconds 600 --exe wall_target --format svg \
	-o "$WORK/rec.svg"
"$TARGET" 2 >/dev/null
stop_record
grep -q '<svg' "$WORK/rec.svg" && grep -q 'sleepy_sleep' "$WORK/rec.svg" ||
	fail "the wall-clock flamegraph does not show sleepy_sleep"
pass "folded and svg"

# 2. GET /debug/fgprof, the workload running across the window.
. "$(dirname "$0")/../lib/serve.sh"
serve "$(free_port 17520)" --exe wall_target --off-cpu-period-us 1000
for q in 'seconds=0' 'seconds=abc' 'seconds=100000' 'frequency=0' 'frequency=5000' 'format=bogus' \
	'labels=nope' 'max_bytes=12'; do
	call bad GET "/debug/fgprof?$q"
	expect_code bad 400 "fgprof?$q"
	call badcpu GET "/debug/pprof/profile?$q"
	[ "$(body bad)" = "$(body badcpu)" ] || fail "fgprof?$q: '$(body bad)', the CPU route: '$(body badcpu)'"
done
pass "bad parameters: the CPU route's 400s"

"$TARGET" 9 >"$WORK/truth2.txt" &
W=$!
sleep 1.5
# As Alloy's profile.fgprof block asks (seconds twice, its params), beside
# one at the default frequency.
curl -s -m 90 -D "$WORK/alloy.hdr" -o "$WORK/alloy.pb.gz" \
	"$BASE/debug/fgprof?seconds=5&seconds=5&frequency=19&labels=default" &
A=$!
curl -s -m 90 -D "$WORK/scrape.hdr" -o "$WORK/scrape.pb.gz" \
	"$BASE/debug/fgprof?seconds=5&labels=default,thread_name" || fail "the scrape failed (curl $?)"
wait $A || fail "the Alloy-like scrape failed (curl $?)"
wait $W
tail -1 "$WORK/truth2.txt" | grep -qx done || fail "wall_target did not finish"
for f in scrape alloy; do
	head -1 "$WORK/$f.hdr" | grep -q ' 200' || fail "$f: $(head -1 "$WORK/$f.hdr")"
done
check "$WORK/scrape.pb.gz" "$WORK/truth2.txt"
check_top "$WORK/alloy.pb.gz"
pass "GET /debug/fgprof: each phase's share within 10 points, each thread's time within 10% of the 5 s window"
