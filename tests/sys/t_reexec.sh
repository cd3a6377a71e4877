#!/bin/bash
# A process that re-execs itself every millisecond (issue 25, item 11):
# most of its exec generations are gone before the daemon can read their
# /proc/PID/maps.  Those samples must not be symbolized with another
# generation's mappings, and must not be anonymous addresses either: they
# carry the executable's name as a frame, "[reexec_target]".  Before the
# fix, ~half of this process's CPU showed as unsymbolized addresses.
. "$(dirname "$0")/../lib/common.sh"
need_root

# Generations, not seconds: each burns 1 ms of CPU, so a loaded machine
# stretches the test instead of thinning it.
N=3000
start_record --seconds 600 --frequency 999 --exe reexec_target -o "$WORK/reexec.pb.gz"
out=$("$BUILD/tests/reexec_target" $N)
[ "$out" = done ] || fail "reexec_target did not finish: $out"
kill -INT $RECORD_PID
wait $RECORD_PID || { cat "$WORK/record.err"; fail "profd record failed"; }

python3 - "$WORK/reexec.pb.gz" <<'PY' || fail "re-exec'd generations' samples"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
mine = [s for s in p.samples if s["labels"].get("process_name") == "reexec_target"]
total = sum(s["values"][0] for s in mine)
assert total >= 300, f"only {total} samples of reexec_target"
named = anon = fallback = burn = 0
for s in mine:
    f = p.frames(s)
    v = s["values"][0]
    if None in f:
        anon += v
        continue
    named += v
    if "[reexec_target]" in f:
        fallback += v
    if any("reexec_burn" in x for x in f):
        burn += v
bad = 100.0 * anon / total
print(f"reexec_target: {total} samples; {named} fully named ({fallback} as [reexec_target]); "
      f"{anon} ({bad:.1f}%) with anonymous frames")
assert bad <= 10.0, f"{bad:.1f}% of a re-exec'ing process's samples have anonymous frames"
# The last generation burns 300 ms, long enough to be read: the generations
# that could be read are symbolized, not only named.
print(f"reexec_target: {burn} samples in reexec_burn")
assert burn >= 50, f"only {burn} samples in reexec_burn: the generation that lived was not read"
PY
echo "ok: re-exec'd generations are named"
