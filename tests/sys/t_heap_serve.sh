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
