#!/bin/bash
# The sampled heap mode (issue 26, item 2): libprofd_heap.so, preloaded,
# samples allocations in the process by a byte countdown and reaches profd
# only for sampled allocations and their frees.
#  1. A preloaded heap_target's known sites within 5% of their true
#     allocated and in-use bytes (sampled every 4 KiB on average).
#  2. Traps per call: a preloaded malloc loop at the default mean makes
#     about one probe hit per sampled allocation and one per its free, not
#     two per call.
#  3. PostgreSQL started with the preload, under pgbench: Go's four sample
#     types, postgres's own functions, only the preload's probes, and a
#     comment saying the samples were taken in the process.
#  4. Garbage: a process that calls the sample functions with absurd
#     arguments, a wrong mean, and frees it never allocated records nothing
#     absurd, and the daemon keeps serving.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

PRE=$WORK/libprofd_heap.so
cp "$BUILD/libprofd_heap.so" "$PRE"
chmod 0755 "$WORK" "$PRE"

# It must load where PostgreSQL 14-16 run: bullseye's glibc 2.31.
newest=$(objdump -T "$PRE" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
[ "$(printf '%s\n' "$newest" GLIBC_2.31 | sort -V | tail -1)" = GLIBC_2.31 ] ||
	fail "libprofd_heap.so needs $newest: it would not load on bullseye (glibc 2.31)"
echo "libprofd_heap.so: the newest glibc symbol version it needs is $newest"

# 1. Known sites.
cp "$BUILD/tests/heap_target" "$WORK/pre_target"
PROFD_HEAP_SAMPLE_BYTES=4096 LD_PRELOAD=$PRE "$WORK/pre_target" >"$WORK/ht.out" &
T=$!
PIDS_TO_KILL+=($T)
for _ in $(seq 50); do grep -q ready "$WORK/ht.out" && break; sleep 0.1; done
serve "$(free_port 17640)" --heap --heap-sample-bytes 4096 --pid $T
grep -q "sampled in the process (libprofd_heap.so)" "$WORK/serve.err" ||
	fail "the daemon did not take the preload: $(grep heap: "$WORK/serve.err")"
kill -USR1 $T
for _ in $(seq 600); do grep -q "^done" "$WORK/ht.out" && break; sleep 0.1; done
grep -q "^done" "$WORK/ht.out" || fail "heap_target did not finish"
call allocs GET "/debug/pprof/allocs?labels=default,pid"
expect_code allocs 200 "allocs of the preloaded target"
python3 - "$WORK/allocs.body" <<'PY' || fail "the preloaded target's sites"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
MiB = 1 << 20
site = {}
for s in p.samples:
    f = p.frames(s)
    v = site.setdefault(f[1] if len(f) > 1 else None, [0, 0, 0, 0])
    for i in range(4):
        v[i] += s["values"][i]
    # The allocator, the function that called it, its caller: the preload's
    # own frames are not in the stack.
    if f[1] == "retain_malloc":
        assert f[0] == "malloc" and f[2] == "main", f[:4]
def near(got, want, what):
    assert abs(got - want) <= 0.05 * want, f"{what}: {got / MiB:.2f} MiB, want {want / MiB:.0f} MiB +-5%"
for fn, leaf, want in (("retain_malloc", "malloc", 48 * MiB), ("retain_calloc", "calloc", 16 * MiB),
                       ("retain_memalign", "posix_memalign", 8 * MiB)):
    assert fn in site, f"no samples at {fn}: {sorted(map(str, site))}"
    near(site[fn][3], want, f"{fn} inuse_space")
    near(site[fn][1], want, f"{fn} alloc_space")
near(site["churn"][1], 256 * MiB, "churn alloc_space")
assert site["churn"][3] <= 0.01 * site["churn"][1], f"churn in use: {site['churn'][3] / MiB:.1f} MiB"
print("ok: a preloaded target's sites within 5%: " + ", ".join(
    f"{k} alloc {v[1] / MiB:.2f} inuse {v[3] / MiB:.2f} MiB" for k, v in sorted(site.items(), key=str) if k))
PY
kill $T "$SERVE_PID"
wait "$SERVE_PID" || true

# 2. Traps: a malloc+free loop at the default mean (512 KiB) of 64-byte
# blocks makes one sample per ~8,000 pairs.
cp "$BUILD/tests/mallocbench" "$WORK/pre_bench"
serve "$(free_port 17640)" --heap --exe "$WORK/pre_bench"
PAUSE=1 LD_PRELOAD=$PRE "$WORK/pre_bench" 1 >"$WORK/mb.out" &
T=$!
heap_attached "$WORK/mb.out" 1 preload || fail "the preloaded loop got no probes"
h0=$(metric profd_heap_probe_hits_total)
s0=$(metric profd_heap_sampled_total)
kill -USR1 $T
wait $T
h1=$(metric profd_heap_probe_hits_total)
s1=$(metric profd_heap_sampled_total)
python3 - "$((h1 - h0))" "$((s1 - s0))" "$(tail -1 "$WORK/mb.out")" <<'PY' || fail "traps per call"
import sys
hits, sampled, line = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split()
pairs = 1e9 / float(line[1])
assert sampled >= 1, "nothing sampled"
assert hits <= 2 * sampled + 10, f"{hits} probe hits for {sampled} samples"
assert hits * 100 <= pairs, f"{hits} probe hits for {pairs:.0f} pairs"
print(f"ok: {pairs:.0f} preloaded malloc+free pairs ({line[1]} ns each): {sampled} sampled, "
      f"{hits} probe hits")
PY
kill "$SERVE_PID"
wait "$SERVE_PID" || true

# 4. Garbage, and a mean that is not the daemon's.
cp "$BUILD/tests/preload_garbage" "$WORK/pre_garbage"
serve "$(free_port 17640)" --heap --exe "$WORK/pre_garbage"
LD_PRELOAD=$PRE "$WORK/pre_garbage" >"$WORK/g.out" &
T=$!
PIDS_TO_KILL+=($T)
heap_attached "$WORK/g.out" 1 preload || fail "the garbage caller got no probes: $(cat "$WORK/g.out")"
kill -USR1 $T
for _ in $(seq 100); do grep -q done "$WORK/g.out" && break; sleep 0.1; done
grep -q done "$WORK/g.out" || fail "preload_garbage did not finish"
[ "$(metric profd_heap_preload_mean_mismatch_total)" -ge 1000 ] ||
	fail "samples at another mean were not counted: $(metric profd_heap_preload_mean_mismatch_total)"
call g GET "/debug/pprof/heap?labels=default,pid"
expect_code g 200 "heap after garbage"
python3 - "$WORK/g.body" "$T" <<'PY' || fail "garbage recorded"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
mine = [s for s in p.samples if s["labels"].get("pid") == sys.argv[2]]
# 1000 blocks of 100 bytes it claimed (its own business, about itself), no
# block of an absurd size, none at the wrong mean, leaves a known allocator.
objs = sum(s["values"][2] for s in mine)
assert all(p.frames(s)[0] == "malloc" for s in mine), {p.frames(s)[0] for s in mine}
assert max((s["values"][3] / max(s["values"][2], 1) for s in mine), default=0) < 1 << 20
print(f"ok: garbage calls: {len(mine)} samples of its own claims, leaf malloc, no absurd size; "
      "samples at another mean counted and dropped")
PY
call h GET /health
expect_code h 200 "/health after garbage"
kill $T "$SERVE_PID"
wait "$SERVE_PID" || true

# 3. PostgreSQL with the preload, as a compute would start it.
PG_ENV="LD_PRELOAD=$PRE"
. "$(dirname "$0")/../lib/postgres.sh"
serve "$(free_port 17640)" --heap --exe postgres
grep -q "sampled in the process (libprofd_heap.so)" "$WORK/serve.err" ||
	fail "postgres's preload was not taken: $(grep heap: "$WORK/serve.err" | tail -3)"
as_pg $PGBIN/psql -h "$WORK" -p $PGPORT -X -q -d postgres -c \
	"SELECT count(*) FROM (SELECT repeat(g::text, 1000) FROM generate_series(1, 200000) g) s" \
	-c "SELECT pg_sleep(120)" >/dev/null 2>&1 &
PIDS_TO_KILL+=($!)
pgbench_run -c 2 -T 4 -S
pgbench_run -C -c 1 -T 2 -S
call pg GET "/debug/pprof/heap?labels=default,pid"
expect_code pg 200 "postgres heap with the preload"
python3 - "$WORK/pg.body" <<'PY' || fail "postgres with the preload"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
want = ["alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes[dflt]"]
assert p.sample_types == want, p.sample_types
assert {s["labels"]["process_name"] for s in p.samples} == {"postgres"}
fns = {f for s in p.samples for f in p.frames(s) if f}
assert not any(f.startswith("profd_heap") for f in fns), "the preload's frames in stacks"
# The profile says where its samples came from.
assert any("preload libprofd_heap.so" in c and "sampled in the process" in c for c in p.comments), p.comments
assert "PostgresMain" in fns or "PostmasterMain" in fns, sorted(fns)[:40]
print(f"ok: postgres with the preload: {len(p.samples)} samples, "
      f"{p.total(1) / 1048576:.1f} MiB allocated (estimated)")
PY
[ "$(metric profd_heap_preload_mean_mismatch_total)" = 0 ] ||
	fail "postgres's samples were at another mean"
pass "the sampled heap mode: sites within 5%, a trap per sample, postgres, garbage"
