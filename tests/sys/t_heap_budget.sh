#!/bin/bash
# --heap-budget: heap probes that cost more than the budget (probe hits of
# every process times the cost of one, measured at start, over 5 s) are
# detached for good; the log, /metrics and heap profiles say so, and the
# daemon goes on serving CPU profiles.  mallocbench (malloc+free pairs, two
# probe hits each) is far over a 2% budget; with 10000% nothing stops.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

metric() { # NAME: its value now
	curl -sf -m 10 "$BASE/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}
bench() { # SECONDS: mallocbench in the background
	"$BUILD/tests/mallocbench" "$1" >"$WORK/mb.out" &
	BENCH=$!
	PIDS_TO_KILL+=($BENCH)
}

# A budget nothing reaches: the cost is measured and reported, nothing stops.
serve "$(free_port 17440)" --heap --exe mallocbench --heap-budget 10000
grep -q "heap: budget 10000% of one CPU over 5 s; a probe hit costs [0-9]* ns here (measured" \
	"$WORK/serve.err" || fail "no measured probe cost in the log: $(grep heap: "$WORK/serve.err")"
bench 8
sleep 7
ppm=$(metric profd_heap_probe_cost_ppm)
[ "${ppm:-0}" -gt 0 ] || fail "profd_heap_probe_cost_ppm is '$ppm' under mallocbench"
[ "$(metric profd_heap_detached)" = 0 ] || fail "detached with a budget of 100 CPUs"
wait $BENCH
echo "ok: under a 10000% budget mallocbench's probes cost $ppm ppm of a CPU; $(cat "$WORK/mb.out")"
kill $SERVE_PID
wait $SERVE_PID || true

serve "$(free_port 17440)" --heap --exe mallocbench --heap-budget 2
bench 60
for _ in $(seq 400); do
	[ "$(metric profd_heap_detached)" = 1 ] && break
	sleep 0.1
done
[ "$(metric profd_heap_detached)" = 1 ] || fail "not detached in 40 s: $(grep heap: "$WORK/serve.err")"
line=$(grep "heap: tracking stopped" "$WORK/serve.err") || fail "the log does not say tracking stopped"
echo "$line" | grep -Eq "its probes detached: allocator probes cost [0-9.]+% of a CPU over 5 s \([0-9]+ hits/s x [0-9]+ ns\), over --heap-budget 2%" ||
	fail "log line: $line"
echo "ok: $line"
kill $BENCH
wait $BENCH 2>/dev/null || true

# No probe is hit any more: mallocbench runs at its unprobed speed.
hits=$(metric profd_heap_probe_hits_total)
"$BUILD/tests/mallocbench" 1 >"$WORK/mb.out"
[ "$(metric profd_heap_probe_hits_total)" = "$hits" ] ||
	fail "probe hits went on after the detach: $hits, then $(metric profd_heap_probe_hits_total)"
cost=$(echo "$line" | sed -E 's/.* hits\/s x ([0-9]+) ns.*/\1/')
pair=$(awk '{ print int($2) }' "$WORK/mb.out")
[ "$pair" -lt "$cost" ] || fail "a malloc+free pair takes $pair ns after the detach; a probe hit costs $cost ns"
echo "ok: after the detach a malloc+free pair takes $pair ns (a probe hit cost $cost ns)"

call heap GET /debug/pprof/heap
expect_code heap 200 "heap profile after the detach"
python3 - "$WORK/heap.body" <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
c = [c for c in p.comments if "heap tracking stopped" in c]
assert c and "over --heap-budget 2%" in c[0] and "in-use values are as of then" in c[0], p.comments
print("ok: the heap profile says:", c[0])
PY

# CPU profiles go on.
bench 30
call cpu GET '/debug/pprof/profile?seconds=2'
expect_code cpu 200 "CPU profile after the heap detach"
python3 - "$WORK/cpu.body" <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
names = {f for s in p.samples for f in p.frames(s)}
assert p.total() > 0 and "pairs" in names, (p.total(), sorted(names)[:20])
print(f"ok: CPU profile after the detach: {p.total()} samples, mallocbench's pairs() in it")
PY
