#!/bin/bash
# The heap site map under churn (issue 22, defect 6).  It is keyed by
# process and fixed in size; the sites of processes that have exited are
# moved out of it, so churn never fills it: with a map of 1024 sites, 60
# short-lived children making 30 sites each (1,800+ in all) lose nothing,
# and the allocs profile still holds every child's allocations.  The map of
# live sampled allocations likewise (1024 entries here): the children exit
# without freeing theirs, whose memory is gone with them.  A live process
# with more sites and live allocations than the maps hold fills them truly,
# and the loss is counted in /metrics and said in the profile's comment.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

metric() { # NAME: its value now
	curl -sf -m 10 "$BASE/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}

# allocs_hold NAME N: GET /debug/pprof/allocs (in $WORK/NAME.body) holds N
# allocations made by make_sites, and says the site map lost none.
allocs_hold() {
	call "$1" GET /debug/pprof/allocs
	expect_code "$1" 200 "GET /debug/pprof/allocs"
	python3 - "$WORK/$1.body" "$2" <<'PY' || fail "/debug/pprof/allocs"
import sys, pprof_raw
p, want = pprof_raw.load(sys.argv[1]), int(sys.argv[2])
n = sum(s["values"][0] for s in p.samples if "make_sites" in p.frames(s))
assert n == want, f"make_sites' allocations in the allocs profile: {n}, want {want}"
loss = [c for c in p.comments if "site map full" in c]
assert loss and "site map full 0," in loss[0], loss
PY
}

# Targets by pid (their forked children with them), so that no other
# process's allocations are kept while the daemon decides whether it is a
# target (as with --exe): the test owns the map.  Each waits for SIGUSR1.
"$BUILD/tests/site_churn" fork 60 30 150 >"$WORK/fork.out" &
FORKER=$!
"$BUILD/tests/site_churn" hold 1100 >"$WORK/hold.out" &
HOLDER=$!
"$BUILD/tests/site_churn" zombies 5 30 >"$WORK/zombies.out" &
ZOMBIER=$!
PIDS_TO_KILL+=($FORKER $HOLDER $ZOMBIER)
# Every allocation sampled (1 byte between samples): counts are exact.
PROFD_HEAP_MAX_SITES=1024 PROFD_HEAP_MAX_LIVE=1024 serve "$(free_port 17520)" --heap --pid $FORKER --pid $HOLDER --pid $ZOMBIER \
	--heap-sample-bytes 1
# 6-7 children a second: 200 sites a second against a pass a second, and
# a map of 1024: room for passes 5 s late on a loaded machine.
kill -USR1 $FORKER
for _ in $(seq 100); do
	grep -q "waiting 60" "$WORK/fork.out" && break
	sleep 0.1
done
grep -q "waiting 60" "$WORK/fork.out" || fail "site_churn did not fork its children"
# Each child carries its parent's probes from its fork (issue 26), or, with
# probes for every process, the one probe serves it: no wait for the
# daemon to hear of the forks.
kill -USR1 $FORKER
wait $FORKER || fail "site_churn fork failed"
grep -q "forked 60" "$WORK/fork.out" || fail "site_churn: $(cat "$WORK/fork.out")"
# The last children's sites leave the map at the next pass.
for _ in $(seq 50); do
	[ "$(metric profd_heap_sites_retired_total)" -ge 1800 ] && break
	sleep 0.2
done
full=$(metric profd_heap_site_map_full_total)
retired=$(metric profd_heap_sites_retired_total)
[ "$full" = 0 ] || fail "the site map filled under churn: $full sampled allocations lost; $retired sites retired"
[ "$retired" -ge 1800 ] || fail "only $retired sites retired of 60 children's 1800+"
[ "$(metric profd_heap_sites_dropped_total)" = 0 ] || fail "retired sites dropped"
live_full=$(metric profd_heap_live_map_full_total)
[ "$live_full" = 0 ] ||
	fail "the live map filled under churn: $live_full sampled allocations not tracked as live"
# make_sites' mallocs: 60 children x 30, each sampled, each a site.
allocs_hold allocs 1800
pass "60 exiting children, 1800 sites and live allocations through 1024-entry maps: $retired sites retired, none lost, all in /debug/pprof/allocs"

# Children that have exited but are not reaped yet: the kernel side forgot
# them as targets at their exit, and kill(pid, 0) still finds them.  Their
# sites are retired all the same, while they are zombies, not dropped as a
# living non-target's (a pass in that moment lost a child's 30 sites in CI).
before=$retired
kill -USR1 $ZOMBIER
for _ in $(seq 100); do
	grep -q "exited 5" "$WORK/zombies.out" && break
	sleep 0.1
done
grep -q "exited 5" "$WORK/zombies.out" || fail "site_churn zombies: $(cat "$WORK/zombies.out")"
for _ in $(seq 150); do
	[ "$(metric profd_heap_sites_retired_total)" -ge $((before + 150)) ] && break
	sleep 0.2
done
retired=$(metric profd_heap_sites_retired_total)
zombies=$(for c in $(cat /proc/$ZOMBIER/task/*/children); do awk '{ print $3 }' /proc/$c/stat; done | grep -c Z)
[ "$zombies" = 5 ] || fail "the 5 children are not zombies while their sites are asked for: $zombies"
[ "$retired" -ge $((before + 150)) ] ||
	fail "5 exited, unreaped children's 150 sites: $((retired - before)) retired"
# The churn's 1800 and the zombies' 150.
allocs_hold allocs2 1950
kill -USR1 $ZOMBIER
wait $ZOMBIER || fail "site_churn zombies: $(cat "$WORK/zombies.out")"
pass "5 exited children not yet reaped: their 150 sites retired while they were zombies, and in /debug/pprof/allocs"

# Truly full: one live process with 1100 sites.
kill -USR1 $HOLDER
for _ in $(seq 100); do
	grep -q "held 1100" "$WORK/hold.out" && break
	sleep 0.1
done
grep -q "held 1100" "$WORK/hold.out" || fail "site_churn hold did not finish"
full=$(metric profd_heap_site_map_full_total)
[ "$full" -ge 76 ] || fail "1100 live sites in a 1024-site map, but profd_heap_site_map_full_total is $full"
live_full=$(metric profd_heap_live_map_full_total)
[ "$live_full" -ge 76 ] ||
	fail "1100 live allocations in a 1024-entry live map, but profd_heap_live_map_full_total is $live_full"
call heap GET /debug/pprof/heap
expect_code heap 200 "GET /debug/pprof/heap"
python3 - "$WORK/heap.body" "$full" <<'PY'
import re, sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
loss = [c for c in p.comments if "site map full" in c]
m = re.search(r"site map full (\d+),", loss[0]) if loss else None
assert m and int(m.group(1)) >= int(sys.argv[2]), loss
PY
pass "a live process with 1100 sites in a 1024-site map: $full sampled allocations counted lost ($live_full not tracked as live), in /metrics and the profile's comment"
