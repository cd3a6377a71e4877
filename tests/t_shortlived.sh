#!/bin/bash
# Processes that live ~20 ms and exit before the profile ends are still
# symbolized: their mappings are captured while they are alive.
. "$(dirname "$0")/lib/common.sh"
need_root

N=120
start_record --exe forker --seconds 6 --frequency 499 -o "$WORK/short.pb.gz"
"$BUILD/tests/forker" $N >"$WORK/forker.out"
[ "$(cat "$WORK/forker.out")" = $N ] || fail "forker did not start $N children"
wait $RECORD_PID || { cat "$WORK/record.err"; fail "profd record failed"; }

python3 - "$WORK/short.pb.gz" $N <<'PY'
import sys, pprof_raw
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
assert pct >= 95.0, f"only {pct:.1f}% of the short-lived processes' samples fully symbolized"
print(f"ok: {len(children)} children sampled, {full}/{total} samples ({pct:.1f}%) fully symbolized")
PY
