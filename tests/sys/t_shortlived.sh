#!/bin/bash
# Processes that live ~20 ms and exit before the profile ends are still
# symbolized: their mappings are captured while they are alive.  Twice:
# with an executable filter (every exec read at once), and for the whole
# system, where a fork or exec is read only at its first sample
# (lazy_procs); and then, whole-system at 19 Hz, that a storm of execs that
# are never sampled costs no process event and no /proc/PID/maps read.
. "$(dirname "$0")/../lib/common.sh"
need_root
. "$TESTS/lib/serve.sh"

# check PROFILE N: >= 90% of N children sampled, >= 95% of their samples
# fully symbolized.
check() {
	python3 - "$1" "$2" <<'PY'
import sys, pprof_raw
from collections import Counter
p = pprof_raw.load(sys.argv[1])
n = int(sys.argv[2])
burn = [s for s in p.samples if "child_burn" in p.frames(s)]
children = {s["labels"]["pid"] for s in burn}
assert len(children) >= 0.9 * n, f"samples from only {len(children)} of {n} children"
kids = [s for s in p.samples if s["labels"].get("process_name") == "forker"]
total = sum(s["values"][0] for s in kids)
full = sum(s["values"][0] for s in kids if all(p.frames(s)))
assert total > 0
pct = 100.0 * full / total
if pct < 95.0:
    # What wasn't symbolized: the frame and the mapping it fell in.
    bad = Counter()
    for s in kids:
        for lid in s["locs"]:
            loc = p.locations[lid]
            if not loc["lines"]:
                m = p.mappings.get(loc["mapping"], {})
                bad[(m.get("file", "?"), hex(loc["addr"] - m.get("start", 0) + m.get("offset", 0)))] += s["values"][0]
    print("unsymbolized:", bad.most_common(10))
assert pct >= 95.0, f"only {pct:.1f}% of the short-lived processes' samples fully symbolized"
print(f"ok: {len(children)} children sampled, {full}/{total} samples ({pct:.1f}%) fully symbolized")
PY
}

# The children burn 20 ms of CPU each, not of wall-clock time, and the
# profile ends when the forker is done (SIGINT), so a loaded machine
# stretches the test rather than thinning its samples.
N=120
for mode in exe whole; do
	args=(--seconds 300 --frequency 499 --labels default,pid -o "$WORK/short.pb.gz")
	[ $mode = exe ] && args+=(--exe forker)
	start_record "${args[@]}"
	"$BUILD/tests/forker" $N >"$WORK/forker.out"
	[ "$(cat "$WORK/forker.out")" = $N ] || fail "forker did not start $N children"
	kill -INT $RECORD_PID
	wait $RECORD_PID || { cat "$WORK/record.err"; fail "profd record failed"; }
	echo "$mode:"
	check "$WORK/short.pb.gz" $N || fail "short-lived processes ($mode)"
done

# metric NAME: its value in /metrics ("" if absent).
metric() { curl -sf -m 10 "$BASE/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }

# Whole system at 19 Hz, as the unit runs: EXECS fork+execs of /bin/true,
# each alive ~1 ms, few of them ever sampled.  The daemon is told only of
# those sampled (FIRST): no event, no /proc read for the others.
EXECS=1000
serve "$(free_port 17900)"
curl -sf -m 300 -o /dev/null "$BASE/debug/pprof/profile?seconds=240&frequency=19" &
SCRAPE=$!
PIDS_TO_KILL+=($SCRAPE)
for _ in $(seq 50); do
	grep -q '/debug/pprof/profile' <(curl -sf -m 5 "$BASE/sessions") && break
	sleep 0.1
done
# events: the process events the daemon has handled, all kinds.
events() {
	curl -sf -m 10 "$BASE/metrics" |
		awk '$1 ~ /^profd_process_events_total\{/ && $1 !~ /title/ { n += $2 } END { print n + 0 }'
}
forks() { awk '$1 == "processes" { print $2 }' /proc/stat; }
sleep 1	# what came before (the scrape's own curl) is drained
e0=$(events) r0=$(metric profd_process_maps_reads_total) p0=$(forks)
for _ in $(seq $EXECS); do /bin/true; done
p1=$(forks)
# Forks and exits that are reported do not wake the daemon: give a timed
# drain (100 ms) time to run, so that any would be counted.
sleep 1
e1=$(events) r1=$(metric profd_process_maps_reads_total)
kill $SCRAPE 2>/dev/null || true
echo "$((p1 - p0)) processes forked: $((e1 - e0)) process events, $((r1 - r0)) maps reads"
[ $((p1 - p0)) -ge $EXECS ] || fail "only $((p1 - p0)) forks counted by the kernel"
[ $((e1 - e0)) -le $((EXECS / 5)) ] || fail "$((e1 - e0)) process events for $EXECS execs that were rarely sampled"
[ $((r1 - r0)) -le $((EXECS / 5)) ] || fail "$((r1 - r0)) maps reads for $EXECS execs that were rarely sampled"
echo "ok: t_shortlived"
