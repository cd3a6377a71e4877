#!/bin/bash
# Off-CPU profiles (issue 24): offcpu_target's threads wait in nanosleep, a
# pipe read and a futex wait, each under its own function, and time their
# own waits; the profile must give each stack that time within 10%.  Those
# waits are 20 ms, past the sampling period: each is kept, exactly.  Its
# short_naps thread switches every ~150 us, so only some of its switches
# are kept, each weighing time / p: with --off-cpu-period-us 400, ~2 in 5,
# and its estimate must hold within 10% too.  (At the default 10 ms, ~1 in
# 60 are kept, and on this loaded VM one nap that waited 20 ms for a CPU
# weighs over a second when kept: within 40% is all that holds there; at
# 1 ms, 10% held in 5 runs of 6.)  The
# CPU-bound thread, preempted but never blocked, has no off-CPU time.  Through
# `profd record --off-cpu` (pprof, folded, svg) and through two concurrent
# scrapes of GET /debug/pprof/offcpu, whose bad parameters get 400s.
# (The scrapes send what Alloy's block in docs/operations.md sends: seconds
# twice, and its frequency, which means nothing here.)
# The workload runs inside each profile's window, so what it measured is
# the whole truth however loaded the machine is.
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v go >/dev/null || { echo "skip: no go (make test-deps)"; exit 77; }

TARGET=$BUILD/tests/offcpu_target

# check PROFILE TRUTH NAPS_PCT: every stack's off-CPU time against the waits
# the workload timed itself; short_naps's within NAPS_PCT.
check() {
	python3 - "$1" "$2" "$3" <<'PY' || fail "off-CPU times of $1"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
naps_pct = float(sys.argv[3])
truth = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 2:
        truth[f[0]] = int(f[1])
assert p.sample_types == ["switches/count", "offcpu/nanoseconds"], p.sample_types
mine = [s for s in p.samples if s["labels"].get("process_name") == "offcpu_target"]
assert mine, "no samples of offcpu_target"
def of(fn, idx):
    return sum(s["values"][idx] for s in mine if fn in p.frames(s))
for fn, tol in (("sleep_in_nanosleep", 10), ("block_in_pipe_read", 10),
                ("block_in_futex_wait", 10), ("short_naps", naps_pct)):
    got, want = of(fn, 1), truth[fn]
    err = 100.0 * (got - want) / want
    print(f"{fn}: {got / 1e9:.3f} s off CPU in the profile, {want / 1e9:.3f} s timed "
          f"({err:+.1f}%), {of(fn, 0)} switches")
    assert abs(err) <= tol, f"{fn}: {err:+.1f}% off the truth (at most {tol}%)"
# Each 20 ms wait is a switch kept whole: as many switches as waits, as the
# workload counted them (not its time / 20 ms: under load a nap lasts longer).
n = of("sleep_in_nanosleep", 0)
waits = truth["sleep_in_nanosleep.waits"]
assert abs(n - waits) <= 0.1 * waits, f"{n} switches for {waits} nanosleeps"
burn = of("burn_cpu", 1)
print(f"burn_cpu: {burn / 1e6:.1f} ms off CPU")
assert burn <= 20e6, f"the CPU-bound thread has {burn / 1e6:.1f} ms off CPU"
assert any("off-CPU time at context switches" in c for c in p.comments), p.comments
PY
}

# go tool pprof -top reads it, and names the waits.
check_top() {
	go tool pprof -top -symbolize=none "$1" >"$WORK/top.txt" 2>&1 ||
		fail "go tool pprof -top cannot read $1: $(head -3 "$WORK/top.txt")"
	grep -q '^Type: offcpu' "$WORK/top.txt" || fail "-top: not an offcpu profile: $(head -5 "$WORK/top.txt")"
	for fn in sleep_in_nanosleep block_in_pipe_read block_in_futex_wait; do
		grep -q "$fn" "$WORK/top.txt" || fail "-top does not show $fn"
	done
}

# 1. profd record --off-cpu
"$PROFD" record --off-cpu --off-cpu-period-us 5 --seconds 1 -o /dev/null 2>"$WORK/bad.err" &&
	fail "--off-cpu-period-us 5 was taken"
grep -q -- '--off-cpu-period-us must be 10..1000000' "$WORK/bad.err" || fail "$(cat "$WORK/bad.err")"
start_record --off-cpu --off-cpu-period-us 400 --seconds 600 --exe offcpu_target -o "$WORK/rec.pb.gz"
"$TARGET" 4 >"$WORK/truth1.txt"
tail -1 "$WORK/truth1.txt" | grep -qx done || fail "offcpu_target did not finish"
stop_record
check "$WORK/rec.pb.gz" "$WORK/truth1.txt" 10
check_top "$WORK/rec.pb.gz"
pass "profd record --off-cpu: each wait's time within 10% (short naps too, 400 us period), go tool pprof -top reads it"

# Folded stacks and the flamegraph show nanoseconds.
start_record --off-cpu --seconds 600 --exe offcpu_target --format folded -o "$WORK/rec.folded"
"$TARGET" 2 >"$WORK/truth2.txt"
stop_record
want=$(awk '$1 == "block_in_futex_wait" {print $2}' "$WORK/truth2.txt")
got=$(awk '/block_in_futex_wait/ {n += $NF} END {print n + 0}' "$WORK/rec.folded")
awk -v g="$got" -v w="$want" 'BEGIN {exit !(g >= 0.9 * w && g <= 1.1 * w)}' ||
	fail "folded: block_in_futex_wait $got ns, timed $want ns"
start_record --off-cpu --seconds 600 --exe offcpu_target --format svg -o "$WORK/rec.svg"
"$TARGET" 1 >/dev/null
stop_record
grep -q '<svg' "$WORK/rec.svg" && grep -q 'block_in_pipe_read' "$WORK/rec.svg" ||
	fail "the off-CPU flamegraph does not show block_in_pipe_read"
pass "folded ($got ns in block_in_futex_wait, $want timed) and svg"

# 2. GET /debug/pprof/offcpu
. "$(dirname "$0")/../lib/serve.sh"
serve "$(free_port 17460)" --exe offcpu_target
for q in 'seconds=0' 'seconds=abc' 'seconds=100000' 'frequency=0' 'frequency=5000' 'format=bogus' \
	'labels=nope' 'max_bytes=12'; do
	call bad GET "/debug/pprof/offcpu?$q"
	expect_code bad 400 "offcpu?$q"
done
pass "bad parameters: 400"

for i in 1 2; do
	curl -s -m 90 -D "$WORK/scrape$i.hdr" -o "$WORK/scrape$i.pb.gz" \
		"$BASE/debug/pprof/offcpu?seconds=12&seconds=12&frequency=19&labels=default" &
	eval "SCRAPE$i=\$!"
done
for _ in $(seq 100); do
	call metrics GET /metrics
	grep -q '^profd_sessions_running 2$' "$WORK/metrics.body" && break
	sleep 0.1
done
grep -q '^profd_sessions_running 2$' "$WORK/metrics.body" || fail "the two scrapes did not start"
"$TARGET" 4 >"$WORK/truth3.txt"
wait $SCRAPE1 || fail "scrape 1 failed (curl $?)"
wait $SCRAPE2 || fail "scrape 2 failed (curl $?)"
for i in 1 2; do
	head -1 "$WORK/scrape$i.hdr" | grep -q ' 200' || fail "scrape $i: $(head -1 "$WORK/scrape$i.hdr")"
	check "$WORK/scrape$i.pb.gz" "$WORK/truth3.txt" 40
done
check_top "$WORK/scrape1.pb.gz"
pass "two concurrent scrapes of /debug/pprof/offcpu: each wait's time within 10% in both"
