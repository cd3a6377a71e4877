#!/bin/bash
# A target that takes its allocator away under the daemon's probes (issue
# 26's bad input): after keeping 64 MiB at keep_site and churning 64 MiB at
# churn_site, alloc_swap unmaps its allocator's text, or maps another file
# over it (a copy of libc: a new inode that defines malloc, at the old
# address), and lives on by raw system calls.  With the allocator probes
# (libc.so.6 replaced) and in the sampled mode (libprofd_heap.so replaced),
# its heap profile still holds what it kept, nothing in the replaced text,
# no churn in use; the daemon keeps serving and the process exits cleanly,
# so nothing the daemon planted in its memory broke it.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

PRE=$WORK/libprofd_heap.so
cp "$BUILD/libprofd_heap.so" "$PRE"
cp "$BUILD/tests/alloc_swap" "$WORK/alloc_swap"
libc=$(ldd "$BUILD/tests/alloc_swap" | awk '$1 == "libc.so.6" { print $3 }')
cp "$libc" "$WORK/libc-copy.so"
chmod 0755 "$WORK" "$PRE"

one() { # MODE(probes|preload) WITH(unmap|FILE)
	local mode=$1 with=$2 object=libc.so.6 env=() preload=
	if [ "$mode" = preload ]; then
		object=libprofd_heap.so
		env=(LD_PRELOAD=$PRE PROFD_HEAP_SAMPLE_BYTES=65536)
		preload=preload
	fi
	rm -f "$WORK/stop"
	env "${env[@]}" "$WORK/alloc_swap" $object "$with" "$WORK/stop" >"$WORK/as.out" &
	local t=$!
	PIDS_TO_KILL+=($t)
	heap_attached "$WORK/as.out" $((attach0 + 1)) $preload || fail "$mode: alloc_swap got no probes"
	attach0=$(metric profd_heap_attach_total)
	kill -USR1 $t
	for _ in $(seq 600); do grep -q swapped "$WORK/as.out" && break; sleep 0.1; done
	grep -q "^swapped" "$WORK/as.out" || fail "$mode, $with: $(cat "$WORK/as.out")"
	call h GET "/debug/pprof/heap?labels=default,pid"
	expect_code h 200 "$mode, $with: heap after the swap"
	read -r lo hi < <(sed -n 's/^kept; replacing \([0-9a-f]*\)-\([0-9a-f]*\) .*/\1 \2/p' "$WORK/as.out")
	python3 - "$WORK/h.body" $t "$mode, $with" $lo $hi $([ "$with" = unmap ] && echo kept || echo replaced) $object \
		<<'PY' || fail "$mode, $with: what was recorded"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
pid, what, lo, hi, fate = sys.argv[2], sys.argv[3], int(sys.argv[4], 16), int(sys.argv[5], 16), sys.argv[6]
obj = sys.argv[7]
MiB = 1 << 20
site, inside = {}, 0
for s in p.samples:
    if s["labels"].get("pid") != pid:
        continue
    f = p.frames(s)
    assert f[0] in ("malloc", "calloc", "realloc", None), f"{what}: leaf {f[0]}"
    # Return addresses in the text taken away: named from the file that was
    # there when it was unmapped (nothing has run there since); where another
    # file took its place, named from the first file (when the daemon read
    # the maps before the swap) or not at all, never from the new one.
    for lid in s["locs"][1:]:
        loc = p.locations[lid]
        if lo <= loc["addr"] < hi:
            inside += 1
            file = p.mappings.get(loc["mapping"], {}).get("file", "")
            if fate == "kept":
                assert loc["lines"] and file.endswith("/" + obj), \
                    f"{what}: {loc['addr']:#x} in the unmapped text: {loc['lines']} from {file}"
            else:
                assert not loc["lines"] or file.endswith("/" + obj), \
                    f"{what}: {loc['addr']:#x} named {loc['lines']} from {file}, mapped over it"
    v = site.setdefault(f[1], [0, 0, 0, 0])
    for i in range(4):
        v[i] += s["values"][i]
keep, churn = site.get("keep_site"), site.get("churn_site")
assert keep and abs(keep[3] - 64 * MiB) <= 0.10 * 64 * MiB, \
    f"{what}: keep_site in use {keep and keep[3] / MiB} MiB, want 64 +-10%"
assert churn and churn[3] <= 2 * MiB, f"{what}: churn_site in use {churn and churn[3] / MiB} MiB"
print(f"ok ({what}): keep_site {keep[3] / MiB:.1f} MiB in use, churn_site "
      f"{churn[1] / MiB:.1f} MiB allocated, {churn[3] / MiB:.2f} in use; {inside} frames in "
      f"the text taken away, {fate}; sites {sorted(map(str, site))}")
PY
	touch "$WORK/stop"
	wait $t || fail "$mode, $with: alloc_swap exited $? after the swap"
	call h2 GET /health
	expect_code h2 200 "$mode, $with: /health after the target exited"
}

for mode in probes preload; do
	# ~4000 samples of keep_site in the probes' mode, ~1000 in the sampled
	# mode: the 10% bound is over 3 standard errors.
	flags=(--heap --exe "$WORK/alloc_swap" --heap-sample-bytes 16384)
	[ $mode = preload ] && flags=(--heap --exe "$WORK/alloc_swap" --heap-sample-bytes 65536)
	serve "$(free_port 17650)" "${flags[@]}"
	attach0=$(metric profd_heap_attach_total)
	one $mode unmap
	one $mode "$WORK/libc-copy.so"
	[ $mode = probes ] || grep -q "sampled in the process (libprofd_heap.so)" "$WORK/serve.err" ||
		fail "the preload was not taken"
	kill "$SERVE_PID"
	wait "$SERVE_PID" || fail "$mode: the daemon exited $?: $(tail -5 "$WORK/serve.err")"
done
pass "a target that unmaps or replaces its allocator: its kept bytes stay, nothing else recorded"
