#!/bin/bash
# Labels that answer postgres questions (issue #13): a cluster with a
# cluster_name under pgbench, a second database used by another role, a
# concurrent VACUUM and CHECKPOINTs.  Samples carry backend_type, database
# and user; go tool pprof -tagfocus selects them; the default label set has
# no pid, so a pgbench -C storm makes few label sets, and ?labels=pid,tid
# brings the pids back; bad label names are a 400; the SVG and folded
# renderings split by backend_type.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"
. "$(dirname "$0")/../lib/postgres.sh"

psql_() { as_pg $PGBIN/psql -h "$WORK" -p $PGPORT -X -q -v ON_ERROR_STOP=1 "$@"; }

# Debian's clusters set cluster_name: titles read "postgres: 15/main: ...".
# Autovacuum as eager as it goes, so that its workers show beside pgbench.
AUTOVACUUM="-c autovacuum_naptime=1 -c autovacuum_vacuum_threshold=50 -c autovacuum_vacuum_scale_factor=0
-c autovacuum_analyze_threshold=50 -c autovacuum_analyze_scale_factor=0 -c autovacuum_vacuum_cost_delay=0"
AUTOVACUUM=$(echo $AUTOVACUUM)
as_pg $PGBIN/pg_ctl -D "$PGDATA" -l "$WORK/pg.log" -w -m fast \
	-o "-p $PGPORT -k $WORK -c listen_addresses='' -c cluster_name=15/main $AUTOVACUUM" restart >/dev/null ||
	fail "postgres did not restart with a cluster_name"
psql_ -d postgres -c "CREATE ROLE alice LOGIN" -c "CREATE DATABASE shop OWNER alice"
ps -o args= -u postgres | grep -q "postgres: 15/main: checkpointer" ||
	fail "no cluster name in the titles: $(ps -o args= -u postgres)"

serve "$(free_port 17500)" --exe postgres

# ---- a busy cluster: what runs where
T=8
scrape() { # NAME QUERY
	curl -s -m 120 -o "$WORK/$1.out" -w '%{http_code}' "$BASE/debug/pprof/profile?$2" \
		>"$WORK/$1.code" &
	PIDS_TO_KILL+=($!)
	eval "${1}_pid=$!"
}
scrape main "seconds=$T&frequency=499"
scrape svg "seconds=$T&frequency=199&format=svg&split=backend_type"
scrape folded "seconds=$T&frequency=199&format=folded&split=backend_type"
sessions_running 3
pgbench_run -c 2 -T $((T - 1)) &
bench=$!
# alice's queries in shop, one session: CPU in a client backend of another
# database and role.
psql_ -U alice -d shop -c "DO \$\$ BEGIN
	WHILE clock_timestamp() < now() + interval '$((T - 1)) s' LOOP
		PERFORM count(*) FROM generate_series(1, 200000);
	END LOOP; END \$\$" &
alice=$!
# VACUUM and CHECKPOINT beside them, one session.
for _ in $(seq 200); do echo "VACUUM ANALYZE pgbench_accounts; CHECKPOINT;"; done >"$WORK/maint.sql"
timeout $((T - 1)) runuser -u postgres -- $PGBIN/psql -h "$WORK" -p $PGPORT -X -q -d postgres \
	-f "$WORK/maint.sql" >/dev/null 2>&1 &
maint=$!
wait $bench || fail "pgbench failed: $(cat "$WORK/pgbench.out")"
wait $alice || fail "alice's psql failed"
wait $maint || [ $? = 124 ] || fail "the VACUUM and CHECKPOINT psql failed"
wait $main_pid $svg_pid $folded_pid
for n in main svg folded; do
	[ "$(cat "$WORK/$n.code")" = 200 ] || fail "$n scrape: status $(cat "$WORK/$n.code"): $(head -c 300 "$WORK/$n.out")"
done

# LABELS_KEEP=FILE keeps the profile (docs/operations.md's walkthrough uses one).
[ -z "${LABELS_KEEP:-}" ] || cp "$WORK/main.out" "$LABELS_KEEP"
python3 - "$WORK/main.out" <<'PY'
import sys, pprof_raw
from collections import Counter
p = pprof_raw.load(sys.argv[1])
total = p.total()
assert total > 0
keys = {k for s in p.samples for k in s["labels"]}
assert not keys & {"pid", "tid", "thread_name"}, f"per-process labels by default: {keys}"
by = Counter()
for s in p.samples:
    l = s["labels"]
    by[(l.get("backend_type"), l.get("database"), l.get("user"))] += s["values"][0]
for k, v in by.most_common():
    print(f"  {v:6d}  {k}")
typed = sum(v for k, v in by.items() if k[0])
assert typed >= 0.8 * total, f"only {typed}/{total} postgres samples have a backend_type"
assert by[("client backend", "postgres", "postgres")] > 0, "no samples of pgbench's backends"
assert by[("client backend", "shop", "alice")] > 0, "no samples of alice's backend in shop"
assert by[("checkpointer", None, None)] > 0, "no checkpointer samples"
types = {k[0] for k in by}
assert types <= {"client backend", "checkpointer", "background writer", "walwriter",
                 "autovacuum launcher", "autovacuum worker", "logical replication launcher",
                 "postmaster", "startup", None}, types
# Samples merged by label set: a handful of sets, not one per process.
sets = {tuple(sorted(s["labels"].items())) for s in p.samples}
assert len(sets) <= 20, f"{len(sets)} label sets"
print(f"ok: {total} samples, {len(sets)} label sets, {len(types)} backend types")
PY

# go tool pprof selects by the labels.
tagfocus() { # TAG=REGEXP: "samples other" with that focus
	go tool pprof -raw -tagfocus="$1" "$WORK/main.out" 2>/dev/null | python3 -c '
import sys, re, pprof_raw
p = pprof_raw.Profile(sys.stdin.read())
tag, want = sys.argv[1].split("=", 1)
other = [s for s in p.samples if not re.search(want, s["labels"].get(tag, ""))]
print(p.total(), len(other))' "$1"
}
set -- $(tagfocus backend_type=checkpointer)
[ "${1:-0}" -gt 0 ] && [ "$2" = 0 ] || fail "-tagfocus=backend_type=checkpointer: $1 samples, $2 of other types"
set -- $(tagfocus database=shop)
[ "${1:-0}" -gt 0 ] && [ "$2" = 0 ] || fail "-tagfocus=database=shop: $1 samples, $2 of other databases"
go tool pprof -raw -tagfocus=database=shop "$WORK/main.out" >"$WORK/shop.raw" 2>/dev/null
grep -q 'user:\[alice\]' "$WORK/shop.raw" || fail "-tagfocus=database=shop: not alice's"

# The flamegraphs' root level is the backend type.
grep -q '>client backend<\|client backend (' "$WORK/svg.out" || fail "svg: no 'client backend' root frame"
grep -q '^checkpointer;\|^client backend;' "$WORK/folded.out" ||
	fail "folded: no backend_type roots: $(head -3 "$WORK/folded.out")"
# Samples without a backend_type (a backend that exited before its title was
# read) show their process name instead: few (about as few as checked above).
awk '{ n = $NF; all += n } /^postgres;/ { untyped += $NF }
     END { if (all == 0 || untyped > 0.2 * all) { print untyped "/" all; exit 1 } }' \
	"$WORK/folded.out" || fail "folded: too many samples without a backend_type"

# ---- a connection storm: label sets stay few by default; pids on request
C=8
scrape storm "seconds=$C&frequency=499"
scrape stormpid "seconds=$C&frequency=499&labels=default,pid,tid"
# What docs/operations.md's Alloy config asks (Alloy may send seconds twice),
# and its relabelled target (__param_labels).
scrape alloy "seconds=$C&seconds=$C&frequency=19&labels=default"
scrape alloy2 "seconds=$C&frequency=19&labels=process_name,backend_type"
# profd record takes the same list, and splits its folded stacks the same way.
start_record --exe postgres --seconds $((C - 1)) --frequency 499 --labels pid \
	--format folded --split backend_type -o "$WORK/rec.folded"
# The compute API takes the same list.
curl -s -m 120 -o "$WORK/post.body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d '{"profiler": {"BccProfile": null}, "timeout_seconds": 3, "sampling_frequency": 499, "labels": "backend_type,pid"}' \
	"$BASE/profile/cpu" >"$WORK/post.code" &
post_pid=$!
sleep 0.5
pgbench_run -C -c 2 -T $((C - 1)) -S
wait $storm_pid $stormpid_pid $post_pid $alloy_pid $alloy2_pid
wait $RECORD_PID || { cat "$WORK/record.err"; fail "profd record failed"; }
grep -q '^client backend;' "$WORK/rec.folded" ||
	fail "record --split backend_type: roots $(cut -d';' -f1 "$WORK/rec.folded" | sort | uniq -c)"
for n in storm stormpid alloy alloy2; do
	[ "$(cat "$WORK/$n.code")" = 200 ] || fail "$n scrape: status $(cat "$WORK/$n.code")"
done
python3 - "$WORK/storm.out" "$WORK/stormpid.out" "$WORK/alloy.out" "$WORK/alloy2.out" <<'PY'
import sys, pprof_raw
p, q = pprof_raw.load(sys.argv[1]), pprof_raw.load(sys.argv[2])
for f, want in ((sys.argv[3], {"process_name", "backend_type", "database", "user"}),
                (sys.argv[4], {"process_name", "backend_type"})):
    a = pprof_raw.load(f)
    keys = {k for s in a.samples for k in s["labels"]}
    assert a.total() > 0 and {"process_name", "backend_type"} <= keys <= want, (f, keys)
sets = {tuple(sorted(s["labels"].items())) for s in p.samples}
pids = {s["labels"]["pid"] for s in q.samples}
tids = {s["labels"].get("tid") for s in q.samples}
# pgbench -C makes hundreds of backends a second on an idle machine, a few
# dozen on a loaded one; the bound below must hold either way.
assert len(pids) >= 10, f"only {len(pids)} pids sampled during pgbench -C"
assert None not in tids, "samples without tid with labels=default,pid,tid"
assert len(sets) <= 20, f"{len(sets)} distinct label sets under pgbench -C: {sorted(sets)[:30]}"
# Backends that live a few ms are labelled too: their titles come from
# /proc at their first sample or, once gone, from their exit_group.
pg = [s for s in p.samples if s["labels"].get("process_name") == "postgres"]
pg_total = sum(s["values"][0] for s in pg)
pg_typed = sum(s["values"][0] for s in pg if s["labels"].get("backend_type"))
if pg_typed < 0.95 * pg_total:
    from collections import Counter
    why = Counter()
    for s in pg:
        if not s["labels"].get("backend_type"):
            fr = [f for f in p.frames(s) if f]
            why[(fr[0] if fr else "?", fr[-1] if fr else "?", s["labels"].get("process_name"))] += s["values"][0]
    print("untyped (leaf, root):", why.most_common(12))
print(f"pgbench -C: {pg_typed}/{pg_total} postgres samples ({100 * pg_typed / max(pg_total, 1):.1f}%) have a backend_type")
assert pg_total > 0 and pg_typed >= 0.95 * pg_total, f"only {pg_typed}/{pg_total} postgres samples under pgbench -C have a backend_type"
print(f"ok: pgbench -C: {len(sets)} label sets by default; {len(pids)} pids with labels=default,pid,tid")
PY

# The page offers the split.
call page GET /
grep -q '<option value="backend_type">' "$WORK/page.body" || fail "the page offers no split by backend_type"

# Titles are read per sampled process, rate-limited: not per sample, and
# not per fork.  Under pgbench -C at 499 Hz a backend lives ~5 ms and gets
# one or two samples, so reads per sample says little; reads per process
# looked up (profd_process_titles, plus those expired once exited before
# every live profile began; fewer than its bound here, so none evicted) is
# the invariant.  A backend's first sample brings its title, read by the
# kernel side (profd_process_live_titles_used_total), and one gone by the
# time its samples are drained has its exit title: /proc is read for the
# re-reads of those sampled for longer (a title about to change, one still
# alive at a later sample), 160 reads for 1,795 processes measured, at most
# half a read per process asserted.  Before live titles it was 1.1-2.2
# reads each; the fork watch that exit titles replace read three times per
# fork on top.
call m GET /metrics
metric() { awk -v n="$1" '$1 == n { print $2 }' "$WORK/m.body"; }
reads=$(metric profd_process_title_reads_total) samples=$(metric profd_samples_total)
procs=$(($(metric profd_process_titles) + $(metric profd_process_titles_expired_total)))
exits=$(metric profd_process_exit_titles_used_total)
live=$(metric profd_process_live_titles_used_total)
[ "$reads" -lt $((samples / 2)) ] && [ "$reads" -le $((procs / 2 + 50)) ] &&
	[ "$live" -ge $((procs / 2)) ] ||
	{ grep -E "^profd_(process|samples)" "$WORK/m.body" >&2; fail "$reads title reads and $live live titles for $samples samples of $procs processes"; }
pass "$reads title reads for $samples samples of $procs processes ($live first read from the title the kernel side sent with the first sample, $exits labelled from exit titles)"

# ---- bad label names are the client's error; the daemon keeps serving
call bad GET '/debug/pprof/profile?seconds=1&labels=pid,bogus'
expect_code bad 400 "unknown label"
expect_pprof_error bad "unknown label"
body bad | grep -q 'unknown label "bogus"' || fail "400 does not name the label: $(body bad)"
call bad2 GET '/debug/pprof/profile?seconds=1&split=pid'
expect_code bad2 400 "split by a numeric label"
call bad3 POST /profile/cpu -H 'Content-Type: application/json' \
	-d '{"profiler": {"BccProfile": null}, "timeout_seconds": 1, "labels": "tid,nope"}'
expect_code bad3 422 "unknown label in the POST body"
body bad3 | grep -q 'nope' || fail "422 does not name the label: $(body bad3)"
[ "$(cat "$WORK/post.code")" = 200 ] || fail "POST with labels: status $(cat "$WORK/post.code")"
python3 - "$WORK/post.body" <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
keys = {k for s in p.samples for k in s["labels"]}
assert keys <= {"backend_type", "pid"} and "pid" in keys, keys
print(f"ok: POST labels: {sorted(keys)}")
PY
call health GET /health
expect_code health 200 "health after bad requests"

# ---- the daemon's default: --labels and "labels" in the config file
kill $SERVE_PID; wait $SERVE_PID || true
echo '{"labels": "pid,bogus"}' >"$WORK/bad.json"
! "$PROFD" serve --listen 127.0.0.1:1 --config "$WORK/bad.json" 2>"$WORK/bad.err" ||
	fail "a config with an unknown label was accepted"
grep -q 'unknown label "bogus"' "$WORK/bad.err" || fail "config error: $(cat "$WORK/bad.err")"
echo '{"labels": "backend_type,pid"}' >"$WORK/cfg.json"
serve "$(free_port 17600)" --exe postgres --config "$WORK/cfg.json"
scrape cfg "seconds=3&frequency=499"
sessions_running 1
pgbench_run -c 2 -T 2 -S
wait $cfg_pid
[ "$(cat "$WORK/cfg.code")" = 200 ] || fail "cfg scrape: status $(cat "$WORK/cfg.code")"
python3 - "$WORK/cfg.out" <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
keys = {k for s in p.samples for k in s["labels"]}
assert keys == {"backend_type", "pid"}, keys
print(f"ok: the config's labels: {sorted(keys)}")
PY
pass "t_labels"
