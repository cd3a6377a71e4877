#!/bin/bash
# Heap profiles from the daemon: off by default (409 saying how to turn it
# on), and with --heap, postgres under pgbench read through go tool pprof
# from /profile/heap, /debug/pprof/heap and /debug/pprof/allocs.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"
. "$(dirname "$0")/../lib/postgres.sh"

serve "$(free_port 17300)"
call off GET /profile/heap
expect_code off 409 "heap off"
body off | grep -q -- "--heap" || fail "the 409 does not say how to turn heap tracking on: $(body off)"
kill $SERVE_PID; wait $SERVE_PID || true

serve "$(free_port 17310)" --heap --exe postgres --heap-sample-bytes 65536
grep -q "free+0x3 (je" "$WORK/serve.err" || { cat "$WORK/serve.err"; fail "free's probe is not on an emulated instruction"; }
# A backend still alive when the profiles are built, so it has title labels.
as_pg $PGBIN/psql -h "$WORK" -p $PGPORT -X -q -d postgres -c \
	"SELECT count(*) FROM (SELECT repeat(g::text, 1000) FROM generate_series(1, 200000) g) s" \
	-c "SELECT pg_sleep(120)" >/dev/null 2>&1 &
PIDS_TO_KILL+=($!)
pgbench_run -c 2 -T 4 -S
pgbench_run -C -c 1 -T 2 -S
for path in /profile/heap /debug/pprof/heap /debug/pprof/allocs; do
	name=$(echo $path | tr / _)
	call "$name" GET "$path?labels=default,pid"
	expect_code "$name" 200 "GET $path"
	[ "$(header "$name" Content-Type)" = application/octet-stream ] || fail "$path: Content-Type $(header "$name" Content-Type)"
	is_gzip "$WORK/$name.body" || fail "$path: not gzip"
done
python3 - "$WORK/_profile_heap.body" "$WORK/_debug_pprof_allocs.body" <<'PY'
import sys, pprof_raw
heap, allocs = pprof_raw.load(sys.argv[1]), pprof_raw.load(sys.argv[2])
want = ["alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"]
assert heap.sample_types == want[:3] + ["inuse_space/bytes[dflt]"], heap.sample_types
assert allocs.sample_types == ["alloc_objects/count", "alloc_space/bytes[dflt]"] + want[2:], allocs.sample_types
assert heap.period == 65536
names = {s["labels"]["process_name"] for s in heap.samples}
assert names == {"postgres"}, names
pids = {s["labels"]["pid"] for s in heap.samples}
# Heap samples are read from the kernel when the profile is built: the
# processes still running then (the sleeping psql's backend; pgbench's have
# exited) are labelled.
types = {s["labels"].get("backend_type") for s in heap.samples}
assert "client backend" in types, types
alloc = heap.total(1)
assert alloc > 1 << 20, f"only {alloc} bytes allocated by postgres under pgbench?"
fns = {f for s in heap.samples for f in heap.frames(s) if f}
assert fns & {"malloc", "calloc", "realloc"}, sorted(fns)[:20]
assert "PostgresMain" in fns or "PostmasterMain" in fns, sorted(fns)[:40]
print(f"ok: {len(heap.samples)} heap samples from {len(pids)} postgres processes, "
      f"{alloc / 1048576:.1f} MiB allocated (estimated), {heap.total(3) / 1048576:.1f} MiB in use")
PY
call svg GET '/profile/heap?format=svg'
expect_code svg 200 "heap svg"
grep -q "<svg" "$WORK/svg.body" || fail "heap svg is not an SVG"
call bad GET '/debug/pprof/heap?format=jpeg'
expect_code bad 400 "bad heap format"

# --- allocator slots (issue 25, item 3): a process that maps 300 objects
# without an allocator takes none of the 256 slots, so a process with a new
# libc (another inode, as after an upgrade) is still tracked.
kill $SERVE_PID; wait $SERVE_PID || true
H=$WORK/slots
mkdir -p "$H/libs" "$H/libc"
echo 'int tiny_fn(void) { return 1; }' >"$H/tiny.c"
cc -shared -fPIC -o "$H/tiny.so" "$H/tiny.c"
libs=()
for i in $(seq 300); do
	cp "$H/tiny.so" "$H/libs/tiny_$i.so"
	libs+=("$H/libs/tiny_$i.so")
done
cat >"$H/dlopener.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!dlopen(argv[i], RTLD_NOW)) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
	puts("loaded");
	fflush(stdout);
	pause();
	return 0;
}
EOF
cat >"$H/hog.c" <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static volatile sig_atomic_t go;
static void on_usr1(int sig) { go = 1; }
__attribute__((noinline)) static void *hog_alloc(size_t n)
{
	void *p = malloc(n);

	if (p)
		memset(p, 1, n);
	return p;
}
int main(void)
{
	/* Its libc is probed at its exec: the test says when that landed. */
	signal(SIGUSR1, on_usr1);
	while (!go)
		pause();
	for (int i = 0; i < 250; i++)
		if (!hog_alloc(1 << 20))
			return 1;
	puts("done");
	fflush(stdout);
	pause();
	return 0;
}
EOF
cc -O1 -g -o "$H/dlopener" "$H/dlopener.c" -ldl
cc -O1 -g -fno-omit-frame-pointer -o "$H/hog" "$H/hog.c"
cp "$(ldd "$H/hog" | awk '/libc.so.6/ {print $3}')" "$H/libc/libc.so.6"
serve "$(free_port 17320)" --heap --heap-sample-bytes 65536
"$H/dlopener" "${libs[@]}" >"$H/dl.out" &
PIDS_TO_KILL+=($!)
for _ in $(seq 100); do grep -qs loaded "$H/dl.out" && break; sleep 0.1; done
grep -q loaded "$H/dl.out" || fail "slots: the 300 objects did not load"
# The daemon has looked at the 300 objects when its probed objects stop
# changing; the hog's libc copy is one more, probed at its exec.  Polled,
# not slept: a fixed wait let a loaded machine allocate before the probes.
probed=$(metric profd_heap_objects_probed)
for _ in $(seq 20); do
	sleep 0.5
	now=$(metric profd_heap_objects_probed)
	[ "$now" = "$probed" ] && break
	probed=$now
done
LD_LIBRARY_PATH=$H/libc "$H/hog" >"$H/hog.out" &
HOG=$!
PIDS_TO_KILL+=($HOG)
for _ in $(seq 300); do
	[ "$(metric profd_heap_objects_probed)" -gt "$probed" ] && break
	sleep 0.1
done
[ "$(metric profd_heap_objects_probed)" -gt "$probed" ] || fail "slots: the hog's libc copy was not probed in 30 s"
grep -q "$H/libc/libc.so.6" "/proc/$HOG/maps" || fail "slots: the hog does not map the libc copy"
kill -USR1 $HOG
for _ in $(seq 300); do grep -qs done "$H/hog.out" && break; sleep 0.1; done
grep -qs done "$H/hog.out" || fail "slots: the hog did not finish its allocations"
call slots GET "/debug/pprof/heap?labels=default,pid"
expect_code slots 200 "heap after 300 objects"
python3 - "$WORK/slots.body" "$HOG" <<'PY' || fail "slots: the process with a new libc was not tracked"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
inuse = p.sample_types.index("inuse_space/bytes[dflt]")
mine = sum(s["values"][inuse] for s in p.samples if s["labels"].get("pid") == sys.argv[2])
print(f"slots: the hog's live heap in the profile: {mine >> 20} MiB")
assert mine >= 100 << 20, mine
PY
[ "$(curl -s "$BASE/metrics" | awk '$1 == "profd_heap_objects_refused_total" {print $2}')" = 0 ] ||
	fail "slots: allocators were refused"
pass "300 objects without an allocator take no slot: a new libc's process is tracked"
