#!/bin/bash
# The static profd of `make dist` where the compute images run it (issue 20).
#
# The tarball first: one static, stripped profd; profd.debug carrying the
# same build ID, with DWARF, named by profd's .gnu_debuglink; the heap
# preload library, needing no glibc newer than bullseye's; the systemd
# unit; every file under packaging/; checksums that hold.
#
# Then its profd, copied alone into minimal Debian roots made by
# debootstrap and cached (tests/roots/suite.sh): bullseye (glibc 2.31,
# postgresql-13), bookworm (2.36, 15) and trixie (2.41, 17).  In a chroot of
# each, with /proc, /sys and /dev, it serves: a CPU profile of that root's
# own postgres under pgbench through the compute API (POST /profile/cpu),
# with postgres's function names; a heap profile whose probes capstone
# placed (linked in: never "no disassembler"); /health and /metrics.  Then
# the sampled heap mode as docs/operations.md sets it up: that postgres
# started again with the tarball's libprofd_heap.so preloaded (installed by
# the docs' recipe in bullseye), and a heap profile, under pgbench -C, whose
# allocation sites are postgres's functions and which says its samples were
# taken in the process.
#
# And in an empty root holding only the binary and /proc, /sys and /dev: a
# profile of a host process (build/tests/inline_target) with its symbols;
# the one line that says DEBUGINFOD_URLS goes unused; a clear error for a
# --listen host name that cannot resolve there.
#
# Each root's mounts live in a mount namespace of their own (unshare), so
# nothing of the host is ever mounted under $WORK, and the cached roots are
# only ever the lower layer of an overlay: nothing is written to them.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS/lib/serve.sh"
for tool in unshare nsenter chroot readelf objcopy objdump; do
	command -v $tool >/dev/null || { echo "skip: no $tool"; exit 77; }
done
[ -z "${SANITIZE:-}" ] || { echo "skip: the static build is not sanitized"; exit 77; }
TOP=$(cd "$TESTS/.." && pwd)

# --- the tarball, as `make dist` makes it
make -C "$TOP" --no-print-directory dist >"$WORK/dist.log" 2>&1 ||
	{ tail -30 "$WORK/dist.log" >&2; fail "make dist failed"; }
tarball=$(sed -n 's/^dist: \([^ ]*\.tar\.gz\) .*/\1/p' "$WORK/dist.log" | tail -1)
[ -f "$TOP/$tarball" ] || fail "make dist names no tarball: $(tail -3 "$WORK/dist.log")"
name=$(basename "$tarball" .tar.gz)
[[ $name == profd-*-$(uname -m)-linux ]] || fail "tarball name $name"
tar -xzf "$TOP/$tarball" -C "$WORK"
D=$WORK/$name
want="BUILD-ID SHA256SUMS libprofd_heap.so profd profd.debug profd.service"
for f in "$TOP"/packaging/*; do [ -f "$f" ] && want="$want $(basename "$f")"; done
got=$(cd "$D" && ls | sort | xargs)
[ "$got" = "$(echo $want | tr ' ' '\n' | sort | xargs)" ] ||
	fail "tarball holds: $got; want: $want"
(cd "$D" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS does not hold"
cmp -s "$D/profd.service" "$TOP/systemd/profd.service" || fail "profd.service differs from systemd/"
# readelf's output in files: grep -q ends a pipe early, and pipefail
# would take readelf's SIGPIPE for a failure.
readelf -lW "$D/profd" >"$WORK/segments"
readelf -dW "$D/profd" >"$WORK/dynamic" 2>&1 || true
readelf -SW "$D/profd" >"$WORK/sections"
readelf -SW "$D/profd.debug" >"$WORK/debug.sections"
grep -q 'program interpreter' "$WORK/segments" && fail "profd asks for a program interpreter"
grep -q NEEDED "$WORK/dynamic" && fail "profd needs shared libraries"
grep -qE '\.symtab|\.debug_info' "$WORK/sections" && fail "profd is not stripped"
grep -q '\.debug_info' "$WORK/debug.sections" || fail "profd.debug has no DWARF"
id_of() { readelf -nW "$1" | awk '/Build ID:/ {print $NF}'; }
bid=$(id_of "$D/profd")
[ -n "$bid" ] && [ "$bid" = "$(id_of "$D/profd.debug")" ] ||
	fail "build IDs: profd '$bid', profd.debug '$(id_of "$D/profd.debug")'"
[ "$(cat "$D/BUILD-ID")" = "$bid" ] || fail "BUILD-ID says $(cat "$D/BUILD-ID"), profd has $bid"
objcopy --dump-section .gnu_debuglink="$WORK/debuglink" "$D/profd" 2>/dev/null ||
	fail "profd has no .gnu_debuglink"
[ "$(tr -d '\0' <"$WORK/debuglink" | head -c 11)" = profd.debug ] ||
	fail ".gnu_debuglink names $(tr -d '\0' <"$WORK/debuglink" | head -c 40)"
# The preload library loads into bullseye's postgres (glibc 2.31): nothing
# newer asked of glibc (the roots below load it), and it defines what profd
# probes.
objdump -T "$D/libprofd_heap.so" >"$WORK/preload.dynsyms"
newest=$(grep -o 'GLIBC_[0-9.]*' "$WORK/preload.dynsyms" | sort -uV | tail -1)
[ "$(printf '%s\n' "$newest" GLIBC_2.31 | sort -V | tail -1)" = GLIBC_2.31 ] ||
	fail "the tarball's libprofd_heap.so needs $newest: it would not load in bullseye (2.31)"
for f in profd_heap_sampled profd_heap_freed malloc; do
	grep -qE "DF \.text.* $f\$" "$WORK/preload.dynsyms" || fail "libprofd_heap.so does not export $f"
done
pass "$tarball: $(du -k "$TOP/$tarball" | cut -f1) KiB; static stripped profd," \
	"profd.debug with build ID $bid, libprofd_heap.so (newest glibc symbol $newest), the unit," \
	"packaging/ ($want)"

# --- a root: its own mount namespace, held by one process (NS)
NS="" M=""
# enter_root DIR [LOWER]: M=DIR/root, an overlay of LOWER (written to
# DIR/up) or an empty directory, with /proc, /sys and /dev.
enter_root() {
	local dir=$1 lower=${2:-}
	M=$dir/root
	mkdir -p "$dir/up" "$dir/wk" "$M"
	[ -n "$lower" ] || mkdir -p "$M/proc" "$M/sys" "$M/dev"
	chmod 755 "$dir" "$M"
	setsid unshare --mount --propagation private /bin/sh -c '
		set -e
		M=$1
		[ -z "$2" ] || mount -t overlay overlay -o "lowerdir=$2,upperdir=$3/up,workdir=$3/wk" "$M"
		mount -t proc proc "$M/proc"
		mount --rbind /sys "$M/sys"
		mount --rbind /dev "$M/dev"
		touch "$3/mounted"
		exec sleep infinity
	' root "$M" "$lower" "$dir" >"$dir/ns.log" 2>&1 &
	NS=$!
	PIDS_TO_KILL+=("$NS")
	for _ in $(seq 100); do
		[ -e "$dir/mounted" ] && break
		kill -0 "$NS" 2>/dev/null || { cat "$dir/ns.log" >&2; fail "mounting $M failed"; }
		sleep 0.1
	done
	[ -e "$dir/mounted" ] || fail "mounting $M took over 10 s"
}
in_root() { nsenter -t "$NS" -m -- chroot "$M" "$@"; }
# put_in_root FILE PATH [MODE]: FILE of the host, as PATH in the root (the
# overlay is mounted in NS's namespace only).
put_in_root() { nsenter -t "$NS" -m -- install -D -m "${3:-0755}" "$1" "$M$2"; }
# serve_in PORT ENV... -- ARGS...: `profd serve` in the root; return once
# /health answers.  Sets SERVE_PID and BASE; its stderr is $WORK/serve.err.
serve_in() {
	local port=$1 envs=()
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" nsenter -t "$NS" -m -- chroot "$M" "$BIN" serve \
		--listen 127.0.0.1:"$port" "$@" 2>"$WORK/serve.err" &
	SERVE_PID=$!
	PIDS_TO_KILL+=("$SERVE_PID")
	BASE=http://127.0.0.1:$port
	for _ in $(seq 150); do
		curl -sf -m 1 -o /dev/null "$BASE/health" && return 0
		kill -0 "$SERVE_PID" 2>/dev/null || fail "profd serve died in $M"
		sleep 0.1
	done
	fail "profd serve in $M did not answer /health in 15 s"
}
stop_serve() { kill "$SERVE_PID" 2>/dev/null || true; wait "$SERVE_PID" 2>/dev/null || true; }

PGPID_FILE=""
leave_root() {
	if [ -n "$PGPID_FILE" ] && [ -s "$PGPID_FILE" ]; then
		kill -QUIT "$(head -1 "$PGPID_FILE")" 2>/dev/null || true
	fi
	PGPID_FILE=""
	kill "$NS" 2>/dev/null || true
	wait "$NS" 2>/dev/null || true
}
trap 'leave_root; cleanup_common' EXIT

# --- the three roots
for suite in ${PROFD_DIST_SUITES:-bullseye bookworm trixie}; do
	rc=0
	R=$("$TESTS/roots/suite.sh" "$suite") || rc=$?
	[ $rc = 77 ] && { echo "skip: no $suite root can be made here (tests/roots/suite.sh said why)"; exit 77; }
	[ $rc = 0 ] || fail "tests/roots/suite.sh $suite failed"
	pg=$(cat "$R/.pg-major")
	enter_root "$WORK/$suite" "$R"
	BIN=/usr/local/bin/profd
	# Where docs/operations.md's recipe installs it.
	PRELOAD=/usr/local/lib/profd/libprofd_heap.so
	if [ "$suite" = bullseye ]; then
		# docs/operations.md's install recipe, as written, with the root's
		# /bin/sh (dash) and no binutils, as in a slim image.
		awk '/^In an image, as root/ { s = 1 } s && /^```/ { n++; if (n == 2) exit; next } s && n == 1' \
			"$TOP/docs/operations.md" | sed "s/profd-VERSION-x86_64-linux/$name/g" >"$WORK/recipe.sh"
		grep -q '^install -m 0755 profd /usr/local/bin/profd$' "$WORK/recipe.sh" ||
			fail "docs/operations.md's install recipe not found: $(cat "$WORK/recipe.sh")"
		nsenter -t "$NS" -m -- install -D -m 0644 "$TOP/$tarball" "$M/tmp/recipe/$name.tar.gz"
		nsenter -t "$NS" -m -- install -D -m 0644 "$WORK/recipe.sh" "$M/tmp/recipe/recipe.sh"
		in_root /bin/sh -ec 'cd /tmp/recipe && . ./recipe.sh' >"$WORK/recipe.out" 2>&1 ||
			{ cat "$WORK/recipe.out" >&2; fail "the install recipe failed in the bullseye root"; }
		in_root cmp -s $BIN "/tmp/recipe/$name/profd" || fail "the recipe did not install profd"
		in_root test -f "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ||
			fail "the recipe did not install profd.debug by build ID"
		in_root cmp -s $PRELOAD "/tmp/recipe/$name/libprofd_heap.so" ||
			fail "the recipe did not install libprofd_heap.so at $PRELOAD"
		in_root cmp -s /etc/profd/config.json "/tmp/recipe/$name/config.example.json" ||
			fail "the recipe did not install the config the inittab entry names"
		pass "docs/operations.md's install recipe works as written in a bullseye root (dash, no binutils)"

		# The tarball's inittab entry, as written, in what the recipe made:
		# bullseye's setpriv (util-linux 2.36, which knows no "bpf") and the
		# recipe's config, only its port moved off 7117.  One start: the
		# respawn itself is t_inittab_respawn's.
		entry=$(grep -v '^[[:space:]]*#' "$D/profd.inittab" | grep -v '^[[:space:]]*$')
		cmd=${entry#::respawn:}
		[ "$cmd" != "$entry" ] || fail "profd.inittab's entry is not ::respawn: $entry"
		iport=$(free_port 17470)
		in_root sed -i "s/127\.0\.0\.1:7117/127.0.0.1:$iport/" /etc/profd/config.json
		nsenter -t "$NS" -m -- chroot "$M" /bin/sh -c "exec $cmd" 2>"$WORK/inittab.err" &
		IPID=$!
		PIDS_TO_KILL+=("$IPID")
		for _ in $(seq 150); do
			curl -sf -m 1 -o "$WORK/ihealth.json" "http://127.0.0.1:$iport/health" && break
			kill -0 "$IPID" 2>/dev/null || fail "the inittab entry stopped in bullseye: $(cat "$WORK/inittab.err")"
			sleep 0.1
		done
		[ -s "$WORK/ihealth.json" ] || fail "the inittab entry did not answer /health in 15 s in bullseye"
		[ "$(cat /proc/$IPID/comm)" = profd ] || fail "the inittab entry's process is $(cat /proc/$IPID/comm)"
		python3 - "$WORK/ihealth.json" "/proc/$IPID/status" <<'PY' || fail "the inittab entry in bullseye"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["status"] == "ok" and h["version"]["link"] == "static", h
st = dict(l.split(":\t", 1) for l in open(sys.argv[2]).read().splitlines() if ":\t" in l)
assert st["NoNewPrivs"].strip() == "1", st["NoNewPrivs"]
bnd, eff = int(st["CapBnd"], 16), int(st["CapEff"], 16)
# CAP_BPF (39) and CAP_PERFMON (38) kept, as the unit's set (less what
# this machine's own bounding set withholds: t_inittab_respawn checks all).
assert bnd == eff and bnd & (3 << 38) == 3 << 38 and bnd < 1 << 40, (hex(bnd), hex(eff))
PY
		kill "$IPID"
		wait "$IPID" 2>/dev/null || true
		pass "packaging/profd.inittab's entry as written starts the static profd in the bullseye root" \
			"(its setpriv, the recipe's config): CAP_BPF and CAP_PERFMON kept, no new privileges"
	else
		put_in_root "$D/profd" $BIN
		put_in_root "$D/libprofd_heap.so" $PRELOAD 0644
	fi
	glibc=$(in_root ldd --version | awk 'NR == 1 {print $NF}')
	in_root $BIN --version >"$WORK/version"
	grep -q '^build: static, ' "$WORK/version" && grep -q '^flags: .* -static-pie$' "$WORK/version" ||
		fail "$suite: profd --version: $(cat "$WORK/version")"

	# That root's postgres, in a data directory of the test's, on a Unix socket.
	PGB=/usr/lib/postgresql/$pg/bin PGPORT=$((20000 + RANDOM % 20000))
	in_root mkdir -p /tmp/pg
	in_root chown postgres: /tmp/pg
	as_pg() { in_root runuser -u postgres -- "$@"; }
	as_pg $PGB/initdb -D /tmp/pg/data -A trust >"$WORK/initdb.log" 2>&1 ||
		{ cat "$WORK/initdb.log" >&2; fail "$suite: initdb"; }
	as_pg $PGB/pg_ctl -D /tmp/pg/data -l /tmp/pg/log -w \
		-o "-p $PGPORT -k /tmp/pg -c listen_addresses=''" start >/dev/null ||
		fail "$suite: postgres did not start: $(in_root tail -5 /tmp/pg/log)"
	# Read from the host: the overlay's upper layer holds what the root wrote.
	PGPID_FILE=$WORK/$suite/up/tmp/pg/data/postmaster.pid
	as_pg $PGB/pgbench -h /tmp/pg -p $PGPORT -i -s 1 postgres >/dev/null 2>&1 ||
		fail "$suite: pgbench -i"

	# DEBUGINFOD_URLS set: were anything (libdw.a's own client) to dlopen
	# libdebuginfod from the static binary, it would abort in bullseye's
	# root and die of SIGFPE in trixie's (docs/operations.md).
	serve_in "$(free_port 17400)" DEBUGINFOD_URLS=http://127.0.0.1:9 -- \
		--heap --exe postgres --heap-sample-bytes 65536
	call health GET /health
	expect_code health 200 "$suite: /health"
	grep -q '"status": *"ok"' "$WORK/health.body" || fail "$suite: /health: $(body health)"
	# The load: bounded by pgbench's own -T, killed once the profiles are in.
	as_pg $PGB/pgbench -h /tmp/pg -p $PGPORT -c 2 -T 60 -S postgres >"$WORK/pgbench.out" 2>&1 &
	LOADER=$!
	PIDS_TO_KILL+=("$LOADER")
	sleep 1
	# The compute API's call, as compute_ctl makes it.
	call cpu POST /profile/cpu -H 'Content-Type: application/json' \
		-d '{"profiler": {"BccProfile": null}, "sampling_frequency": 99, "timeout_seconds": 3, "archive": false}'
	expect_code cpu 200 "$suite: POST /profile/cpu"
	call heap GET '/debug/pprof/heap?labels=default,pid'
	expect_code heap 200 "$suite: GET /debug/pprof/heap"
	call metrics GET /metrics
	expect_code metrics 200 "$suite: /metrics"
	grep -q '^profd_' "$WORK/metrics.body" || fail "$suite: /metrics has no profd_ metrics"
	kill "$LOADER" 2>/dev/null || true
	python3 - "$WORK/cpu.body" "$WORK/heap.body" "$suite" <<'PY' || fail "$suite: the profiles"
import sys, pprof_raw
cpu, heap, suite = pprof_raw.load(sys.argv[1]), pprof_raw.load(sys.argv[2]), sys.argv[3]
fns = {f for s in cpu.samples for f in cpu.frames(s) if f}
procs = {s["labels"].get("process_name") for s in cpu.samples}
assert cpu.total() > 0, "no CPU samples"
assert procs == {"postgres"}, procs
# A backend under pgbench -S: its main loop and the query path, by name.
assert "PostgresMain" in fns, sorted(fns)[:40]
assert fns & {"exec_simple_query", "ExecutorRun", "standard_ExecutorRun", "PortalRun"}, sorted(fns)[:40]
hfns = {f for s in heap.samples for f in heap.frames(s) if f}
assert heap.total(1) > 0, "no bytes allocated in the heap profile"
assert hfns & {"malloc", "calloc", "realloc"}, sorted(hfns)[:20]
assert hfns & {"PostgresMain", "PostmasterMain", "AllocSetAlloc"}, sorted(hfns)[:40]
# Allocator probes, no preload: the profile must not claim otherwise.
assert not any("libprofd_heap.so" in c for c in heap.comments), heap.comments
print(f"{suite}: CPU {cpu.total()} samples, {len(fns)} functions; "
      f"heap {heap.total(1) / 1024:.0f} KiB allocated in {len(heap.samples)} samples")
PY
	! grep -q 'no disassembler' "$WORK/serve.err" || fail "$suite: heap probes without capstone"
	# "malloc+0x7 (push r12), emulated": an instruction capstone decoded.
	grep -qE 'heap: .*: [a-z_]+\+[0-9a-fx]+ \([a-z].*\), emulated' "$WORK/serve.err" ||
		{ grep 'heap:' "$WORK/serve.err" | head -20 >&2; fail "$suite: no probe placed by capstone"; }
	stop_serve
	pass "$suite (glibc $glibc, postgresql-$pg): profd alone in the root serves its postgres's CPU and heap profiles with symbols"

	# The sampled mode: the same postgres started again with the
	# tarball's library preloaded ("by hand" in docs/operations.md), at
	# a mean of 64 KiB in both, so that pgbench's backends give samples
	# in seconds.
	as_pg $PGB/pg_ctl -D /tmp/pg/data -m fast -w stop >/dev/null || fail "$suite: pg_ctl stop"
	as_pg env LD_PRELOAD=$PRELOAD PROFD_HEAP_SAMPLE_BYTES=65536 $PGB/pg_ctl -D /tmp/pg/data \
		-l /tmp/pg/log -w -o "-p $PGPORT -k /tmp/pg -c listen_addresses=''" start >/dev/null ||
		fail "$suite: postgres with the preload did not start: $(in_root tail -5 /tmp/pg/log)"
	pm=$(head -1 "$PGPID_FILE")
	in_root grep -q " $PRELOAD\$" /proc/$pm/maps ||
		fail "$suite: the postmaster (pid $pm) does not map $PRELOAD"
	serve_in "$(free_port 17450)" -- --heap --exe postgres --heap-sample-bytes 65536
	# A new backend for every transaction (-C): each allocates its caches
	# at start, through palloc's contexts, from postgres's own functions.
	as_pg $PGB/pgbench -h /tmp/pg -p $PGPORT -C -c 2 -T 60 -S postgres >"$WORK/pgbench.out" 2>&1 &
	LOADER=$!
	PIDS_TO_KILL+=("$LOADER")
	metric() { curl -sf -m 10 "$BASE/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
	# Bounded by what is asserted: 200 samples, or pgbench's end.
	while kill -0 "$LOADER" 2>/dev/null; do
		n=$(metric profd_heap_sampled_total)
		[ "${n:-0}" -ge 200 ] && break
		sleep 0.5
	done
	call pheap GET '/debug/pprof/heap?labels=default,pid'
	expect_code pheap 200 "$suite: GET /debug/pprof/heap, preloaded"
	call pmetrics GET /metrics
	kill "$LOADER" 2>/dev/null || true
	grep -q "heap: $PRELOAD: sampled in the process (libprofd_heap.so)" "$WORK/serve.err" ||
		fail "$suite: profd did not take the preload: $(grep heap: "$WORK/serve.err" | tail -5)"
	grep -qx 'profd_heap_preload_mean_mismatch_total 0' "$WORK/pmetrics.body" ||
		fail "$suite: $(grep preload_mean "$WORK/pmetrics.body")"
	python3 - "$WORK/pheap.body" "$suite" <<'PY' || fail "$suite: the preloaded postgres's heap profile"
import sys, pprof_raw
p, suite = pprof_raw.load(sys.argv[1]), sys.argv[2]
assert p.sample_types == ["alloc_objects/count", "alloc_space/bytes", "inuse_objects/count",
                          "inuse_space/bytes[dflt]"], p.sample_types
assert {s["labels"].get("process_name") for s in p.samples} == {"postgres"}
said = [c for c in p.comments if "preload libprofd_heap.so" in c]
assert said and "sampled in the process" in said[0], p.comments
def file_of(lid):
    return p.mappings.get(p.locations[lid]["mapping"], {}).get("file", "")
# No frame of the library's own: the stack starts at the allocator its
# caller called.
assert not any(file_of(l).endswith("libprofd_heap.so") for s in p.samples for l in s["locs"][1:])
# A site is the allocator's caller; postgres's own (its binary's mapping).
site = {}
for s in p.samples:
    f = p.frames(s)
    assert f[0] in {"malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign",
                    "valloc", "pvalloc", "reallocarray"}, f[:3]
    if len(s["locs"]) > 1:
        key = (f[1], file_of(s["locs"][1]).endswith("/bin/postgres"))
        site[key] = site.get(key, 0) + s["values"][1]
total = sum(site.values())
own = {fn: b for (fn, pg), b in site.items() if pg and fn}
assert total > 0 and sum(own.values()) >= 0.5 * total, \
    f"postgres's own sites: {sum(own.values())} of {total} bytes: {sorted(site.items(), key=lambda kv: -kv[1])[:10]}"
# Named from postgres's .dynsym; its static functions (AllocSetAlloc: no
# .symtab in Debian's binary, no debuginfod in the static build) stay
# postgres+0xOFFSET.  A memory context's creation is named in 13, 15 and 17.
named = {fn for fn in own if "+0x" not in fn}
assert "AllocSetContextCreateInternal" in named, sorted(named)
fns = {f for s in p.samples for f in p.frames(s) if f}
assert fns & {"PostgresMain", "BackendStartup", "BackendRun", "BackendMain"}, sorted(fns)[:40]
top = sorted(own.items(), key=lambda kv: -kv[1])[:3]
print(f"{suite}: preloaded: {len(p.samples)} samples, {total / 1048576:.1f} MiB allocated (estimated), "
      f"{100 * sum(own.values()) / total:.0f}% at postgres's own sites, first {top}")
PY
	stop_serve
	leave_root
	pass "$suite: postgres preloading the tarball's libprofd_heap.so: a heap profile sampled in the process, at postgres's own sites"
done

# --- an empty root: the binary, /proc, /sys, /dev
enter_root "$WORK/empty"
BIN=/profd
put_in_root "$D/profd" $BIN
[ "$(cd "$M" && ls | xargs)" = "dev proc profd sys" ] || fail "the empty root holds $(ls "$M")"
out=$(in_root "$BIN" serve --listen localhost:1 2>&1) && fail "--listen localhost:1 started in the empty root"
grep -q 'numeric address such as 127.0.0.1' <<<"$out" || fail "--listen localhost in the empty root: $out"
"$BUILD/tests/inline_target" 60 >/dev/null &
BURN=$!
PIDS_TO_KILL+=("$BURN")
serve_in "$(free_port 17500)" DEBUGINFOD_URLS=http://127.0.0.1:9 -- --pid "$BURN"
grep -q 'DEBUGINFOD_URLS is set, but this profd was built without libdebuginfod' "$WORK/serve.err" ||
	fail "no line saying DEBUGINFOD_URLS goes unused"
[ "$(grep -c debuginfod "$WORK/serve.err")" = 1 ] || fail "debuginfod said more than one line"
call cpu GET '/debug/pprof/profile?seconds=3'
expect_code cpu 200 "empty root: GET /debug/pprof/profile"
n=$(pprof_check "$WORK/cpu.body" "empty root")
stop_serve
leave_root
pass "empty root: profd alone served a profile of host pid $BURN ($n samples, hot_a named)"
