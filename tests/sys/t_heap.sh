#!/bin/bash
# Heap profiling: a workload that retains known bytes at known sites and
# churns at another, read back through go tool pprof; with glibc's malloc
# and with jemalloc preloaded; with probes in the target's memory only (the
# default: tracefs uprobe pairs) and, with --heap-all-processes, in every
# process's: uprobe sessions (this kernel) and the uprobe + uretprobe pairs
# kernels before 6.13 get.  Sampling every 16 KiB on average gives
# ~1000 samples for the smallest site (16 MiB), a relative standard error
# of ~3%: the 15% bound is 5 of them, so the test does not flake.
. "$(dirname "$0")/../lib/common.sh"
need_root

check() { # PROFILE LABEL
	python3 - "$1" "$2" "${MEAN:-16384}" "${TOL:-}" <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
label, mean = sys.argv[2], int(sys.argv[3])
tol = float(sys.argv[4]) if sys.argv[4] else None
assert p.sample_types == ["alloc_objects/count", "alloc_space/bytes", "inuse_objects/count",
                          "inuse_space/bytes[dflt]"], p.sample_types
assert p.period == mean, p.period
MiB = 1 << 20
site = {}
for s in p.samples:
    f = p.frames(s)
    # leaf: the allocator entry point; next: the function that called it
    assert f[0] in ("malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc",
                    "memalign", "valloc", "pvalloc"), f[:3]
    caller = f[1]
    v = site.setdefault(caller, [0, 0, 0, 0])
    for i in range(4):
        v[i] += s["values"][i]
def near(got, want, tol, what):
    assert abs(got - want) <= tol * want, f"{label}: {what}: {got / MiB:.1f} MiB, want {want / MiB:.1f} MiB +-{tol:.0%}"
for fn, want in (("retain_malloc", 48 * MiB), ("retain_calloc", 16 * MiB), ("retain_memalign", 8 * MiB)):
    assert fn in site, f"{label}: no samples at {fn}: {sorted(site)}"
    near(site[fn][3], want, tol or 0.15, f"{fn} inuse_space")
    near(site[fn][1], want, tol or 0.20, f"{fn} alloc_space")
churn = site.get("churn")
assert churn, f"{label}: no samples at churn"
near(churn[1], 256 * MiB, tol or 0.20, "churn alloc_space")
assert churn[3] <= 0.01 * churn[1], f"{label}: churn has {churn[3] / MiB:.1f} MiB in use"
# Full chain: the sites are called from main.
chains = [p.frames(s) for s in p.samples]
assert any(c[1:3] == ["retain_malloc", "main"] for c in chains), chains[:3]
assert any("allocations made before tracking began are unknown" in c for c in p.comments)
print(f"ok ({label}): " + ", ".join(f"{k} inuse {v[3] / MiB:.1f} MiB alloc {v[1] / MiB:.1f} MiB"
                                     for k, v in sorted(site.items()) if k))
PY
}

run() { # LABEL [ENV...]
	local label=$1
	shift
	env "$@" "$BUILD/tests/heap_target" >"$WORK/ht.out" &
	local w=$!
	PIDS_TO_KILL+=($w)
	for _ in $(seq 50); do grep -q ready "$WORK/ht.out" && break; sleep 0.1; done
	local flag=--heap
	[ -n "$MODE" ] && flag=--heap-all-processes
	PROFD_HEAP_PROBES=${MODE/all/} start_record $flag --pid $w --seconds 5 --heap-sample-bytes "${MEAN:-16384}" \
		-o "$WORK/$label.pb.gz"
	kill -USR1 $w
	wait $RECORD_PID || { cat "$WORK/record.err"; fail "profd record --heap failed"; }
	grep -q "^done" "$WORK/ht.out" || fail "$label: the workload did not finish in the window"
	grep -q "free+0x3 (je" "$WORK/record.err" || { cat "$WORK/record.err"; fail "free's probe is not on an emulated instruction"; }
	kill $w
	check "$WORK/$label.pb.gz" "$label"
}

# Issue 26's accuracy goal for the allocator probes: every site within 5% of
# its true bytes.  Every call traps in this mode whatever the mean, so a
# 4 KiB mean costs only records: ~4000 samples for the 16 MiB site, a
# relative standard error of 1.6%; the 8 MiB site's 64 KiB blocks are all
# sampled.
MODE="" MEAN=4096 TOL=0.05 run glibc-5pct

JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -e $JEMALLOC ] || fail "libjemalloc2 is not installed"
for MODE in "" all uprobe; do
	run glibc${MODE:+-$MODE}
	run jemalloc${MODE:+-$MODE} LD_PRELOAD=$JEMALLOC
	grep -q "libjemalloc.so.2: free+0x30 (jne" "$WORK/record.err" || { grep jemalloc "$WORK/record.err"; fail "jemalloc's free probe was not moved to an emulated instruction"; }
	python3 - "$WORK/glibc${MODE:+-$MODE}.pb.gz" "${MODE:-pertarget}" <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
want = {"pertarget": "uprobe + uretprobe in the targets' memory only",
        "all": "uprobe sessions in every process",
        "uprobe": "uprobe + uretprobe in every process"}[sys.argv[2]]
assert any("heap probes: " + want in c for c in p.comments), p.comments
print(f"ok: probes were {want}")
PY
done
