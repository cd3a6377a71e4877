#!/bin/bash
# An off-CPU profile holds the waits that began and ended inside it, never
# one that began before it, though sessions overlap: Alloy's `offcpu` and
# `fgprof` blocks (docs/operations.md) scrape at once, so the sched_switch
# program stays attached from one scrape to the next, and a scrape takes
# the slot its predecessor left.  A thread whose kept wait spans that
# boundary (an idle backend in ClientRead, for minutes) must not give its
# whole wait to the next scrape, a profile of a few seconds then holding
# minutes of one thread's time off CPU.
#
# A copy of bash named wait_target waits on three fifos in turn, each wait
# ended by this script: a long scrape B holds all of them; a short one A1
# ends during the second wait, and A2, started after A1 in A1's slot while
# B keeps the program attached, sees the second wait end and the third
# begin.  A2 must hold neither; B must hold the second and third whole; A1
# and A2 each name the thread as still off CPU at their end.  The waits'
# ends are this script's writes, so what is asserted does not depend on
# how loaded the machine is.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

cp /bin/bash "$WORK/wait_target"
for f in f1 f2 f3; do mkfifo "$WORK/$f"; done
serve "$(free_port 17560)" --exe wait_target --log-level debug

# running N: wait until N sessions run.
running() {
	for _ in $(seq 300); do
		call metrics GET /metrics
		grep -q "^profd_sessions_running $1\$" "$WORK/metrics.body" && return 0
		sleep 0.1
	done
	fail "$1 sessions did not come to run: $(grep '^profd_sessions' "$WORK/metrics.body")"
}
now() { date +%s%N; }

# The waiter, blocked on f1 before any session (a wait nobody times).
"$WORK/wait_target" -c "read -r a < $WORK/f1; read -r b < $WORK/f2; read -r c < $WORK/f3" &
W=$!
PIDS_TO_KILL+=("$W")

scrape() {	# NAME SECONDS
	curl -s -m 90 -D "$WORK/$1.hdr" -o "$WORK/$1.pb.gz" \
		"$BASE/debug/pprof/offcpu?seconds=$2&labels=default"
}
scrape B 12 &
SB=$!
running 1
scrape A1 2 &
SA1=$!
running 2
t0=$(now)
echo x >"$WORK/f1"	# W's second wait (f2) begins: kept for B and A1
wait $SA1 || fail "A1: curl $?"
running 1
scrape A2 2 &
SA2=$!
running 2
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
python3 - "$WORK" "$t0" "$t1" "$t2" <<'PY' || fail "off-CPU time given across a session's start"
import sys, pprof_raw
work, t0, t1, t2 = sys.argv[1], *map(int, sys.argv[2:])
def waited(name):
    p = pprof_raw.load(f"{work}/{name}.pb.gz")
    assert p.sample_types == ["switches/count", "offcpu/nanoseconds"], p.sample_types
    return sum(s["values"][1] for s in p.samples
               if s["labels"].get("process_name") == "wait_target")
b, a1, a2 = waited("B"), waited("A1"), waited("A2")
truth = t2 - t0
print(f"B: {b / 1e9:.3f} s of wait_target off CPU, {truth / 1e9:.3f} s timed here "
      f"(its f2 and f3 waits); A1: {a1 / 1e9:.3f} s; A2: {a2 / 1e9:.3f} s "
      f"(the f2 wait, {(t1 - t0) / 1e9:.3f} s, began before it)")
assert abs(b - truth) <= 0.1 * truth, "B does not hold the two waits whole"
# A1 and A2 hold at most the short waits of a read after its open.
assert a1 <= 50e6, "A1 holds a wait that ended after it"
assert a2 <= 50e6, "A2 holds a wait that began before it"
PY
# The slot B and A1 shared, and A1's successor: each names the waiter as
# still off CPU at its end, A2 for its third wait.
n=$(grep -c "off-CPU session [0-9]*: pid $W tid $W (wait_target) still off CPU at the end" \
	"$WORK/serve.err")
[ "$n" -eq 2 ] || fail "the waiter named still off CPU $n times, not 2 (A1, A2): $(grep 'still off' "$WORK/serve.err")"
grep "still off CPU" "$WORK/serve.err" | sed "s/^/  /"
pass "a wait that spans two overlapping scrapes counts in the one it began and ended in, not in the next one in its slot"
