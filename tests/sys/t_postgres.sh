#!/bin/bash
# PostgreSQL under pgbench -C (a new backend per transaction), profiled by
# executable: backends forked after the profile began are in it, and user
# frames are symbolized.
. "$(dirname "$0")/../lib/common.sh"
need_root

. "$(dirname "$0")/../lib/postgres.sh"

before=$(pgrep -d, -x postgres || true)
start_record --exe postgres --seconds 6 --frequency 199 --labels default,pid -o "$WORK/pg.pb.gz"
pgbench_run -C -c 2 -T 4 -S
wait $RECORD_PID || { cat "$WORK/record.err"; fail "profd record failed"; }
grep -E "^(tps|number of transactions actually)" "$WORK/pgbench.out" || true

python3 - "$WORK/pg.pb.gz" "$before" $PGBIN/postgres <<'PY'
import bisect, subprocess, sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
before = set(x for x in sys.argv[2].split(",") if x)
pgbin = sys.argv[3]
pids = {s["labels"]["pid"] for s in p.samples}
new = pids - before
assert len(new) >= 20, f"only {len(new)} backends forked during the profile were sampled"
names = {s["labels"]["process_name"] for s in p.samples}
assert names == {"postgres"}, f"non-postgres processes in the profile: {names}"

# Debian's postgres is stripped: only exported functions (.dynsym) have
# names, and its debug symbols (postgresql-15-dbgsym) are not installable
# here.  So: every frame that nm -D can name must be named, and named
# right; the overall share is reported.
segs = []
for l in subprocess.run(["readelf", "-lW", pgbin], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == "LOAD":
        segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
syms = []
for l in subprocess.run(["nm", "-D", "-S", "--defined-only", pgbin], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if len(f) == 4 and f[2] in "Tt":
        syms.append((int(f[0], 16), int(f[1], 16), f[3]))
syms.sort()
starts = [x[0] for x in syms]
def nm_name(vaddr):
    i = bisect.bisect_right(starts, vaddr) - 1
    if i >= 0 and syms[i][0] <= vaddr < syms[i][0] + syms[i][1]:
        return syms[i][2]
    return None

user = sym = nameable = named_right = 0
for s in p.samples:
    v = s["values"][0]
    for i, lid in enumerate(s["locs"]):
        loc = p.locations[lid]
        m = p.mappings.get(loc["mapping"])
        if m and m["file"] == "[kernel.kallsyms]":
            continue
        user += v
        sym += v if loc["lines"] else 0
        if m and m["file"] == pgbin:
            off = loc["addr"] - m["start"] + m["offset"] - (0 if loc is p.locations[s["locs"][0]] else 1)
            vaddr = next((off - o + va for o, va, sz in segs if o <= off < o + sz), None)
            want = nm_name(vaddr) if vaddr is not None else None
            if want:
                nameable += v
                got = loc["lines"][-1][0] if loc["lines"] else None
                named_right += v if got == want else 0
pct = 100.0 * sym / user
assert nameable > 0
right = 100.0 * named_right / nameable
assert right >= 95.0, f"only {right:.1f}% of postgres frames with a .dynsym name got it"
fns = {l[0] for loc in p.locations.values() for l in loc["lines"]}
for f in ("PostgresMain", "PortalRun"):
    assert f in fns, f"{f} missing from the profile"
print(f"ok: {len(pids)} postgres processes, {len(new)} forked during the profile; "
      f"{right:.1f}% of nameable postgres frames named right; "
      f"{sym}/{user} user frames ({pct:.1f}%) symbolized overall")
PY
