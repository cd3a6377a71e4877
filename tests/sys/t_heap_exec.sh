#!/bin/bash
# A target that starts right after `serve --heap --exe` is up is tracked
# from its first allocation, or its profile says tracking started late:
# ten daemons, each with a heap_target exec'd at once that allocates
# without waiting, beside a busy loop.  Probes go in the targets' memory
# only (issue 26), so the daemon opens them at the exec event: if ld.so has
# not mapped libc yet, quickly (enable_on_exec: the kernel writes the
# breakpoints at that mmap) and the target is tracked whole; if libc was
# mapped first, or meanwhile, the profile says tracking started late (under
# load that happens: such a run is printed, and must be said in its
# profile).  A target whose allocator is elsewhere (jemalloc preloaded) can
# only be probed after it has started: its profile says tracking started
# late.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -e $JEMALLOC ] || fail "libjemalloc2 is not installed"
timeout 600 sh -c 'while :; do :; done' &
PIDS_TO_KILL+=($!)

# check PROFILE PID LABEL: the pid's totals are heap_target's.
check() {
	python3 - "$@" <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
pid, label = sys.argv[2], sys.argv[3]
MiB = 1 << 20
tot = [0] * 4
for s in p.samples:
    if s["labels"].get("pid") == pid:
        for k in range(4):
            tot[k] += s["values"][k]
# 48 + 16 + 8 MiB retained, 256 MiB churned, 8 MiB of pointers kept.
want = 336 * MiB
late = [c for c in p.comments if "started late" in c]
if late and f"heap_target (pid {pid})" in late[0] and "libc.so.6 probed then" in late[0]:
    print(f"ok: {label}: tracked late, and said: {late[0]}")
    sys.exit(0)
assert 0.75 * want <= tot[1] <= 1.25 * want, \
    f"{label}: alloc_space {tot[1] / MiB:.1f} MiB, want {want / MiB} MiB +-25%; {p.comments}"
assert tot[3] >= 40 * MiB, f"{label}: inuse_space {tot[3] / MiB:.1f} MiB, want ~80 MiB"
assert not late, f"{label}: {late}"
print(f"ok: {label}: alloc {tot[1] / MiB:.0f} MiB, inuse {tot[3] / MiB:.0f} MiB")
PY
}

# start_target [ENV...]: heap_target allocating at once; waits until it is done.
start_target() {
	env "$@" "$BUILD/tests/heap_target" now >"$WORK/ht.out" &
	TARGET=$!
	PIDS_TO_KILL+=($TARGET)
	for _ in $(seq 600); do grep -q "^done" "$WORK/ht.out" && return; sleep 0.1; done
	fail "heap_target did not finish in 60 s"
}

for i in $(seq 10); do
	serve "$(free_port 17420)" --heap --exe heap_target
	start_target
	call allocs GET "/debug/pprof/allocs?labels=default,pid"
	expect_code allocs 200 "run $i: GET /debug/pprof/allocs"
	check "$WORK/allocs.body" $TARGET "run $i"
	kill $TARGET $SERVE_PID
	wait $SERVE_PID || true
done

serve "$(free_port 17420)" --heap --exe heap_target
start_target LD_PRELOAD=$JEMALLOC
call heap GET /debug/pprof/heap
expect_code heap 200 "jemalloc: GET /debug/pprof/heap"
python3 - "$WORK/heap.body" $TARGET <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
want = f"started late for heap_target (pid {sys.argv[2]}), "
late = [c for c in p.comments if want in c]
assert late and "libjemalloc.so.2 probed then" in late[0], p.comments
print("ok: jemalloc:", late[0])
PY
grep -q "heap_target (pid $TARGET) is tracked from .* ms after its exec" "$WORK/serve.err" ||
	fail "the log does not say heap_target was tracked late: $(grep heap: "$WORK/serve.err")"
