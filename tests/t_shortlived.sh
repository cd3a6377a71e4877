#!/bin/bash
# Processes that live ~20 ms and exit before the profile ends are still
# symbolized: their mappings are captured while they are alive.
. "$(dirname "$0")/lib/common.sh"
need_root

# The children burn 20 ms of CPU each, not of wall-clock time, and the
# profile ends when the forker is done (SIGINT), so a loaded machine
# stretches the test rather than thinning its samples.
N=120
start_record --exe forker --seconds 300 --frequency 499 --labels default,pid -o "$WORK/short.pb.gz"
"$BUILD/tests/forker" $N >"$WORK/forker.out"
[ "$(cat "$WORK/forker.out")" = $N ] || fail "forker did not start $N children"
kill -INT $RECORD_PID
wait $RECORD_PID || { cat "$WORK/record.err"; fail "profd record failed"; }

python3 - "$WORK/short.pb.gz" $N <<'PY'
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
