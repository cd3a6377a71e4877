#!/bin/bash
# Off-CPU time is counted per window, as fgprof counts it: a profile holds
# the part of each kept wait inside it, though the wait began before it or
# had not ended at its end, and sessions overlap.  Alloy's `offcpu` and
# `fgprof` blocks (docs/operations.md) scrape at once, so the sched_switch
# program stays attached from one scrape to the next, and a scrape takes
# the slot its predecessor left: a thread whose kept wait spans that
# boundary (an idle backend in ClientRead, for minutes) must give the next
# scrape the part of it inside that scrape, not its whole length (before
# 76c4d49 a profile of 2 s held 2.14 s of one thread), and the scrape it
# began in the part inside that one.
#
# A copy of bash named wait_target waits on three fifos in turn, each wait
# ended by this script: a long wall-clock scrape B (/debug/fgprof, Alloy's
# fgprof block) holds all of them; a short off-CPU one A1
# ends during the second wait, and A2, started after A1 in A1's slot while
# B keeps the program attached, sees the second wait end and the third
# begin.  B must hold the second and third whole; A1 the second from its
# start to A1's end; A2, whose whole window the thread spent waiting,
# about its window; A1 and A2 each name the thread as still off CPU at
# their end.  The waits' ends are this script's writes and the windows'
# bounds are read around the scrapes, so what is asserted does not depend
# on how loaded the machine is.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

cp /bin/bash "$WORK/wait_target"
for f in f1 f2 f3; do mkfifo "$WORK/$f"; done
# A 10 us period: B, a wall-clock session, watches preempted switch-outs
# too, and under load the waiter's wait for a CPU between two reads (a few
# ms) enters the mean its next wait's keep probability comes from: at the
# default 10 ms period that could make it 0.9, at 10 us it stays 1.
serve "$(free_port 17560)" --exe wait_target --log-level debug --off-cpu-period-us 10

now() { date +%s%N; }

# The waiter, blocked on f1 before any session (a wait nobody times).  The
# fifos are open before (read-write: the opens do not block), so each wait
# is one blocking read, and the kernel keeps each whole: a thread's first
# wait while watched is kept with p = 1, and its mean, from which the next
# one's p comes, stays long (and see the period below).  (Opened at each read, a fifo's read could
# block a few microseconds after its open, and that short wait lowered
# the next one's p below 1: the wait then went unkept now and then.)
"$WORK/wait_target" -c "exec 3<>$WORK/f1 4<>$WORK/f2 5<>$WORK/f3
	read -r a <&3; read -r b <&4; read -r c <&5" &
W=$!
PIDS_TO_KILL+=("$W")

scrape() {	# NAME SECONDS [ROUTE]
	curl -s -m 90 -D "$WORK/$1.hdr" -o "$WORK/$1.pb.gz" \
		"$BASE${3:-/debug/pprof/offcpu}?seconds=$2&frequency=19&labels=default"
}
scrape B 12 /debug/fgprof &
SB=$!
sessions_running 1
tl1=$(now)
scrape A1 2 &
SA1=$!
sessions_running 2
t0=$(now)
echo x >"$WORK/f1"	# W's second wait (f2) begins: kept for B and A1
wait $SA1 || fail "A1: curl $?"	# its session ended, its slot free
tr1=$(now)
scrape A2 2 &
SA2=$!
sessions_running 2
sleep 1	# mid-window: A2 counts the f2 wait's part since it began, then the f3 one's
t1=$(now)
echo x >"$WORK/f2"	# W's second wait ends inside A2; its third (f3) begins
wait $SA2 || fail "A2: curl $?"
t2=$(now)
echo x >"$WORK/f3"	# the third ends after A2, inside B
wait "$W" || fail "the waiter failed"
wait $SB || fail "B: curl $?"
for s in B A1 A2; do
	head -1 "$WORK/$s.hdr" | grep -q ' 200' || fail "$s: $(head -1 "$WORK/$s.hdr")"
done

# Each profile's off-CPU time of wait_target, in ns.
python3 - "$WORK" "$tl1" "$t0" "$tr1" "$t1" "$t2" <<'PY' || fail "off-CPU time not counted per window"
import sys, pprof_raw
work, tl1, t0, tr1, t1, t2 = sys.argv[1], *map(int, sys.argv[2:])
def waited(name, types=["switches/count", "offcpu/nanoseconds"]):
    p = pprof_raw.load(f"{work}/{name}.pb.gz")
    assert p.sample_types == types, p.sample_types
    # A wall-clock profile's blocked time is its state=sleep.
    return sum(s["values"][1] for s in p.samples
               if s["labels"].get("process_name") == "wait_target"
               and s["labels"].get("state", "sleep") == "sleep")
b = waited("B", ["samples/count", "time/nanoseconds"])
a1, a2 = waited("A1"), waited("A2")
# A1 ended 2 s after it began, after tl1 and before tr1; the f2 wait began
# at t0, just after.
a1_lo, a1_hi = tl1 + 2e9 - t0, tr1 - t0
print(f"B: {b / 1e9:.3f} s of wait_target blocked, {(t2 - t0) / 1e9:.3f} s timed here "
      f"(its f2 and f3 waits); A1: {a1 / 1e9:.3f} s ({a1_lo / 1e9:.3f}..{a1_hi / 1e9:.3f} s "
      f"of its window after the f2 wait began); A2: {a2 / 1e9:.3f} s of its 2 s, "
      f"(the f2 wait, {(t1 - t0) / 1e9:.3f} s, began before it and the f3 one ended after it)")
assert abs(b - (t2 - t0)) <= 0.1 * (t2 - t0), "B does not hold the two waits whole"
assert 0.9 * a1_lo <= a1 <= a1_hi * 1.02, "A1 does not hold the wait from its start to A1's end"
assert 1.8e9 <= a2 <= 2.04e9, "A2 does not hold about its 2 s of a thread that waited throughout"
PY
# The slot B and A1 shared, and A1's successor: each names the waiter as
# still off CPU at its end, A2 for its third wait.
n=$(grep -c "off-CPU session [0-9]*: pid $W tid $W (wait_target) still off CPU at the end" \
	"$WORK/serve.err")
[ "$n" -eq 2 ] || fail "the waiter named still off CPU $n times, not 2 (A1, A2): $(grep 'still off' "$WORK/serve.err")"
grep "still off CPU" "$WORK/serve.err" | sed "s/^/  /"
pass "off-CPU time per window: a wait across two overlapping scrapes counts in each the part inside it"
