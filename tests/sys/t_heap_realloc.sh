#!/bin/bash
# What stays live depends on how an allocator call ended: a realloc that
# fails keeps its old block, one that succeeds frees it, realloc(p, 0)
# frees it, and a calloc whose n * size overflows allocates nothing.  Every
# allocation is sampled (--heap-sample-bytes 1), so the values are exact;
# with uprobe sessions and with the uprobe + uretprobe pairs of older
# kernels.
. "$(dirname "$0")/../lib/common.sh"
need_root

for MODE in "" uprobe; do
	label=${MODE:-session}
	"$BUILD/tests/realloc_target" >"$WORK/rt.out" &
	w=$!
	PIDS_TO_KILL+=($w)
	for _ in $(seq 100); do grep -q ready "$WORK/rt.out" && break; sleep 0.1; done
	PROFD_HEAP_PROBES=$MODE start_record --heap --pid $w --seconds 3 --heap-sample-bytes 1 \
		-o "$WORK/$label.pb.gz"
	kill -USR1 $w
	wait $RECORD_PID || { cat "$WORK/record.err"; fail "$label: profd record --heap failed"; }
	grep -q "^done" "$WORK/rt.out" || fail "$label: the workload did not finish in the window"
	kill $w
	python3 - "$WORK/$label.pb.gz" "$label" <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
label = sys.argv[2]
MiB = 1 << 20
site = {}
for s in p.samples:
    f = p.frames(s)
    v = site.setdefault((f[1], f[0]), [0, 0, 0, 0])
    for i in range(4):
        v[i] += s["values"][i]
def want(caller, fn, alloc, inuse):
    got = site.get((caller, fn), [0, 0, 0, 0])
    assert got[1] == alloc and got[3] == inuse, \
        f"{label}: {caller} -> {fn}: alloc {got[1]}, inuse {got[3]}; want {alloc}, {inuse}; {site}"
want("realloc_fails", "malloc", MiB, MiB)
want("realloc_grows", "malloc", 64, 0)
want("realloc_grows", "realloc", 3 * MiB, 3 * MiB)
want("realloc_zero", "malloc", 4 * MiB, 0)
assert not [k for k in site if k[0] == "calloc_overflows"], f"{label}: {site}"
print(f"ok ({label}): a failed realloc keeps its block, a grown one moves, realloc(p, 0) "
      "frees, an overflowing calloc allocates nothing")
PY
done
