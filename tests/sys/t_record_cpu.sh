#!/bin/bash
# End to end: profd record --pid on a workload with hot functions in a known
# 2:1 ratio, read back with go tool pprof.
. "$(dirname "$0")/../lib/common.sh"
need_root

SECS=5 FREQ=499
# Long enough for both records however slow the machine; killed at the end.
"$BUILD/tests/inline_target" $((SECS + 60)) & WPID=$!
PIDS_TO_KILL+=($WPID)
sleep 0.5
# "Busy CPUs" is what the workload really got: the machine may be shared.
cputicks() { awk '{print $14 + $15}' /proc/$WPID/stat; }
# Counted from when profd says it is profiling, not from its start: its
# start-up (over a second on a loaded machine) is CPU the workload used
# unsampled, and the expected count was off by that much.
start_record --pid $WPID --seconds $SECS --frequency $FREQ --labels all -o "$WORK/cpu.pb.gz"
t0=$(cputicks)
wait $RECORD_PID || fail "profd record: $(tail -3 "$WORK/record.err")"
t1=$(cputicks)
BUSY=$(python3 -c "print(($t1 - $t0) / $(getconf CLK_TCK) / $SECS)")
echo "workload used $BUSY CPUs during the profile"
[ "$(head -c2 "$WORK/cpu.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "pprof output is not gzipped"
start_record --pid $WPID --seconds 1 --frequency $FREQ --format folded -o "$WORK/cpu.folded"
t2=$(cputicks)
wait $RECORD_PID || fail "profd record (folded): $(tail -3 "$WORK/record.err")"
FBUSY=$(python3 -c "print(($(cputicks) - $t2) / $(getconf CLK_TCK))")

BUILD_ID=$(readelf -n "$BUILD/tests/inline_target" | awk '/Build ID/ {print $3}')
python3 - "$WORK/cpu.pb.gz" "$WORK/cpu.folded" "$BUILD_ID" $SECS $FREQ $BUSY $FBUSY <<'PY'
import sys, pprof_raw
path, folded, build_id, secs, freq = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
busy, fbusy = float(sys.argv[6]), float(sys.argv[7])
p = pprof_raw.load(path)
assert p.sample_types == ["samples/count", "cpu/nanoseconds"], p.sample_types
assert p.period == 10**9 // freq, p.period
total = p.total()
expect = secs * freq * busy
assert abs(total - expect) <= 0.2 * expect, f"{total} samples, expected {expect} +-20%"
assert p.total(1) == total * p.period
a = sum(s["values"][0] for s in p.samples if "hot_a" in p.frames(s))
b = sum(s["values"][0] for s in p.samples if "hot_b" in p.frames(s))
assert b > 0, "no samples in hot_b"
ratio = a / b
assert abs(ratio - 2.0) <= 0.15 * 2.0, f"hot_a:hot_b = {ratio:.2f}, expected 2 +-15%"
chain = 0
for s in p.samples:
    f = [x for x in p.frames(s) if x]
    if "hot_a" in f:
        i = f.index("hot_a")
        if f[i + 1:i + 3] == ["run_workload", "main"]:
            chain += s["values"][0]
assert chain >= 0.9 * a, f"only {chain}/{a} hot_a samples have hot_a<-run_workload<-main"
# Inlined mix() shows as its own Line, innermost first, on hot_a's locations.
inl = sum(s["values"][0] for s in p.samples if p.frames(s)[:2] == ["mix", "hot_a"])
assert inl > 0, "no inlined mix frame under hot_a"
maps = [m for m in p.mappings.values() if m["file"].endswith("/inline_target")]
assert maps and all(m["build_id"] == build_id for m in maps), (maps, build_id)
assert all("[FN][FL][LN][IN]" in m["bits"] for m in maps), maps
labels = p.samples[0]["labels"]
for k in ("pid", "tid", "thread_name", "process_name"):
    assert k in labels, labels
assert any("lost samples: 0" in c for c in p.comments), p.comments
print(f"ok: {total} samples (expected {expect:.0f}), hot_a:hot_b = {ratio:.2f}, chain {chain}/{a}, build-id {build_id}")

lines = open(folded).read().splitlines()
assert lines, "empty folded output"
n = 0
for l in lines:
    stack, count = l.rsplit(" ", 1)
    n += int(count)
    assert stack.startswith("inline_target;"), l
assert any("run_workload;hot_a;mix" in l for l in lines), lines[:5]
assert n > 0.5 * freq * fbusy, (n, fbusy)
print(f"ok: folded has {len(lines)} stacks, {n} samples")
PY

# Kernel frames: a process that lives in read(2) and write(2).
dd if=/dev/zero of=/dev/null bs=512 count=100000000 2>/dev/null & DD=$!
PIDS_TO_KILL+=($DD)
"$PROFD" record --pid $DD --seconds 2 --frequency $FREQ -o "$WORK/dd.pb.gz"
kill $DD
python3 - "$WORK/dd.pb.gz" <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
kmaps = [i for i, m in p.mappings.items() if m["file"] == "[kernel.kallsyms]"]
assert kmaps, "no [kernel.kallsyms] mapping"
assert p.mappings[kmaps[0]]["start"] >= 0xffff800000000000, p.mappings[kmaps[0]]
kfns = {l[0] for loc in p.locations.values() if loc["mapping"] in kmaps for l in loc["lines"]}
assert any("sys_read" in f or "sys_write" in f for f in kfns), sorted(kfns)[:30]
total = p.total()
ksamples = sum(s["values"][0] for s in p.samples if p.locations[s["locs"][0]]["mapping"] in kmaps)
assert ksamples >= 0.3 * total, f"only {ksamples}/{total} samples in the kernel"
# Kernel frames sit above the user frames they were called from.
both = [s for s in p.samples if p.locations[s["locs"][0]]["mapping"] in kmaps
        and any(f in ("__libc_read", "__libc_write", "read", "write") for f in p.frames(s))]
assert both, "no sample with kernel frames on top of libc's read/write"
print(f"ok: {ksamples}/{total} samples in the kernel, e.g. {sorted(f for f in kfns if 'sys_' in f)[:3]}")
PY
