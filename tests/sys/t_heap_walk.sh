#!/bin/bash
# Heap profiles built while the target frees: the live-allocation map is
# read with batch lookups, which neither restart nor count twice when frees
# delete entries meanwhile (a key-by-key walk restarts from the first key
# when its current one goes, counting what it had seen again).  heap_target
# retains 48 + 16 + 8 MiB, then churns 4 GiB in 4 KiB blocks, a quarter of
# them sampled; every profile taken during the churn must show the retained
# sites at their size (+-15%, as t_heap), not more.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

serve "$(free_port 17460)" --heap --exe heap_target --heap-sample-bytes 16384
# It allocates once its probes are in place: how a new target's exec is
# caught is t_heap_exec's, not this test's.
"$BUILD/tests/heap_target" wait 4096 >"$WORK/ht.out" &
w=$!
PIDS_TO_KILL+=($w)
for _ in $(seq 600); do
	[ "$(curl -sf -m 10 "$BASE/metrics" | awk '$1 == "profd_heap_attachments" { print $2 }')" -ge 1 ] &&
		grep -q "^ready" "$WORK/ht.out" && break
	sleep 0.1
done
kill -USR1 $w
for _ in $(seq 600); do grep -q "^churning" "$WORK/ht.out" && break; sleep 0.1; done
grep -q "^churning" "$WORK/ht.out" || fail "heap_target did not get to its churn in 60 s"
n=0
while [ $n -lt 3 ]; do
	grep -q "^done" "$WORK/ht.out" && fail "the churn ended after $n profiles: too fast for this test"
	n=$((n + 1))
	call heap$n GET /debug/pprof/heap
	expect_code heap$n 200 "profile $n during the churn"
	python3 - "$WORK/heap$n.body" $n <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
MiB = 1 << 20
site = {}
for s in p.samples:
    f = p.frames(s)
    site[f[1]] = site.get(f[1], 0) + s["values"][3]
for fn, want in (("retain_malloc", 48 * MiB), ("retain_calloc", 16 * MiB), ("retain_memalign", 8 * MiB)):
    got = site.get(fn, 0)
    assert abs(got - want) <= 0.15 * want, \
        f"profile {sys.argv[2]}: {fn} inuse {got / MiB:.1f} MiB, want {want / MiB:.0f} MiB +-15%"
freed = [c for c in p.comments if "of them freed" in c]
print(f"ok: profile {sys.argv[2]} during the churn: " +
      ", ".join(f"{k} {site[k] / MiB:.1f} MiB" for k in ("retain_malloc", "retain_calloc", "retain_memalign")) +
      f"; {freed[0].split('; ')[1]}")
PY
done
grep -q "^done" "$WORK/ht.out" && fail "the churn ended before the last profile was built"
true
