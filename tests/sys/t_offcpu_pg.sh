#!/bin/bash
# Off-CPU profiles of Debian's postgres 15 carry the backend's wait event
# (issue 24), read by the sched_switch program from the backend's own
# *my_wait_event_info as it goes off CPU: `SELECT pg_sleep(2)` is ~2 s of
# wait_event Timeout:PgSleep in that backend's stacks (pg_sleep_for's
# WaitLatch), and a connection left idle waits in Client:ClientRead for as
# long as it is idle (ending when it is sent its next query).  At the
# default period, where a backend's short waits are sampled, a transaction
# waiting on another's row lock is Lock:transactionid for as long as it
# waited, whole: heavyweight lock, buffer pin and timeout waits are always
# kept (their class is read before the wait's length is known).  A
# wall-clock profile (record --wall) labels its off-CPU stacks alike.
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v go >/dev/null || { echo "skip: no go (make test-deps)"; exit 77; }
. "$(dirname "$0")/../lib/postgres.sh"
# record_pg (tests/lib/postgres.sh) profiles this test's postmaster and the
# backends it forks, not other postgres the machine runs (another test's
# pgbench would crowd the ring).

# session NAME SQL: a psql reading its commands from the fifo
# $WORK/NAME.in, held open on fd ${NAME}_FD (closing it ends the session),
# its pid ${NAME}_PSQL; sends it SQL and waits for its first output, in
# $WORK/NAME.out.
session() {
	local fd
	mkfifo "$WORK/$1.in"
	psql_pg <"$WORK/$1.in" >"$WORK/$1.out" &
	eval "${1}_PSQL=\$!"
	exec {fd}>"$WORK/$1.in"
	eval "${1}_FD=\$fd"
	echo "$2" >&$fd
	for _ in $(seq 100); do
		[ -s "$WORK/$1.out" ] && return 0
		sleep 0.1
	done
	fail "session $1 did not answer: $2"
}

# A 10 us period: a backend's waits are kept whole (p = 1) while its mean
# wait is 10 us or more.  At the default 10 ms, a backend whose recent
# waits were short keeps its next Client wait with p < 1, weighted 1 / p:
# the idle connection's one 3 s ClientRead is then 3 s / p or nothing
# (unbiased, not exact: docs/api.md).  Timeout and Lock waits are kept by
# their own mean, which starts at the period: a backend's first one is
# kept whole at any period (part 2).
record_pg --off-cpu --off-cpu-period-us 10 --labels default,pid -o "$WORK/pg.pb.gz"
# An idle connection.
session idle 'select pg_backend_pid();'
IDLE_PID=$(head -1 "$WORK/idle.out")
t0=$(date +%s.%N)
SLEEP_PID=$(psql_pg -c 'select pg_backend_pid(), pg_sleep(2)' | cut -d'|' -f1)
t_sleep=$(date +%s.%N)
sleep 1
# The idle connection's wait ends with its next query.
echo 'select 1;' >&$idle_FD
t1=$(date +%s.%N)
exec {idle_FD}>&-
wait $idle_PSQL
stop_record
IDLE_S=$(python3 -c "print($t1 - $t0)")
# The sleeping backend's whole life, connection to exit: its wait, and the
# time it waited for a CPU after it (off CPU too), fit in it.
SLEEP_S=$(python3 -c "print($t_sleep - $t0)")

python3 - "$WORK/pg.pb.gz" "$SLEEP_PID" "$IDLE_PID" "$IDLE_S" "$SLEEP_S" <<'PY' || fail "wait events"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
sleep_pid, idle_pid, idle_s, sleep_s = sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
# Off-CPU time by process and wait event; "(none)": its event was not read.
events = {}
for s in p.samples:
    key = (s["labels"].get("pid"), s["labels"].get("wait_event") or "(none)")
    events[key] = events.get(key, 0) + s["values"][1]
by_time = sorted(events.items(), key=lambda x: -x[1])
for (pid, ev), ns in [e for e in by_time if e[0][1] != "(none)"][:8]:
    print(f"pid {pid}: {ev}: {ns / 1e9:.3f} s")
sleep = events.get((sleep_pid, "Timeout:PgSleep"), 0) / 1e9
print(f"the pg_sleep(2) connection lived {sleep_s:.3f} s")
# All of its time, to tell a wait missed from one mislabelled (once in CI
# at 374e147: no Timeout:PgSleep, 4 ms of Client:ClientRead).
print(f"pid {sleep_pid}, all its off-CPU time:",
      ", ".join(f"{ev} {ns / 1e9:.3f} s" for (pid, ev), ns in by_time if pid == sleep_pid))
assert 1.95 <= sleep <= sleep_s, f"Timeout:PgSleep {sleep:.3f} s, want 2 s to {sleep_s:.3f} s"
idle = events.get((idle_pid, "Client:ClientRead"), 0) / 1e9
print(f"pid {idle_pid} idle for {idle_s:.3f} s at least")
assert idle >= 0.9 * idle_s, f"Client:ClientRead {idle:.3f} s, the idle connection waited {idle_s:.3f} s"
pg_sleep_stacks = [s for s in p.samples if s["labels"].get("wait_event") == "Timeout:PgSleep"]
assert any("pg_sleep" in f for s in pg_sleep_stacks for f in p.frames(s) if f), \
    "no pg_sleep frame under Timeout:PgSleep"
PY
pass "postgres off-CPU: pg_sleep(2) is ~2 s of Timeout:PgSleep, an idle connection waits in Client:ClientRead"

# 2. A row lock, at the default period.
record_pg --off-cpu --labels default,pid -o "$WORK/lock.pb.gz"
session a 'begin; update pgbench_accounts set abalance = abalance + 1 where aid = 1; select 1;'
ts=$(date +%s.%N)
psql_pg -c 'select pg_backend_pid(); update pgbench_accounts set abalance = abalance - 1 where aid = 1' \
	>"$WORK/b.out" &
B=$!
# From when it is seen waiting (it began a little before): its psql's
# start and connection take 0.5 s and more while the guests' lane runs.
waiting() { [ "$(psql_pg -c "select count(*) from pg_stat_activity where wait_event = 'transactionid'")" = 1 ]; }
for _ in $(seq 300); do
	waiting && break
	sleep 0.1
done
t0=$(date +%s.%N)
waiting || fail "session B never waited for the row lock: $(cat "$WORK/b.out")"
sleep 1.5
t1=$(date +%s.%N)
echo 'commit;' >&$a_FD
exec {a_FD}>&-
wait $B || fail "session B failed: $(cat "$WORK/b.out")"
t2=$(date +%s.%N)
wait $a_PSQL
stop_record
B_PID=$(head -1 "$WORK/b.out")
python3 - "$WORK/lock.pb.gz" "$B_PID" "$(python3 -c "print($t1 - $t0)")" \
	"$(python3 -c "print($t2 - $ts)")" <<'PY' || fail "the row lock wait"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
pid, held, lived = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
got = sum(s["values"][1] for s in p.samples if s["labels"].get("pid") == pid and
          s["labels"].get("wait_event") == "Lock:transactionid") / 1e9
print(f"pid {pid}: Lock:transactionid {got:.3f} s; the lock was held {held:.3f} s after it "
      f"was seen waiting, it lived {lived:.3f} s")
# It waited from before it was seen waiting to the commit.
assert held - 0.05 <= got <= lived, f"Lock:transactionid {got:.3f} s"
PY
pass "a row lock wait is Lock:transactionid, whole, at the default period"

# 3. Short-lived backends (pgbench -C: one per transaction, ~5 ms each)
# keep their wait events: they inherit where it is from the postmaster at
# fork, and their switches are read as they happen, not when the daemon
# gets to them.
record_pg --off-cpu -o "$WORK/short.pb.gz"
pgbench_run -C -c 2 -T 4 -S
stop_record
python3 - "$WORK/short.pb.gz" <<'PY' || fail "short-lived backends' wait events"
import sys, pprof_raw
from collections import Counter
p = pprof_raw.load(sys.argv[1])
by = Counter()
for s in p.samples:
    if s["labels"].get("backend_type") == "client backend":
        by[s["labels"].get("wait_event")] += s["values"][1]
total = sum(by.values())
for ev, ns in by.most_common(5):
    print(f"client backends: {ev}: {ns / 1e9:.3f} s")
assert total > 0, "no off-CPU time of client backends"
share = 100.0 * (total - by[None]) / total
print(f"{share:.1f}% of client backends' off-CPU time has a wait_event")
assert share >= 90, f"only {share:.1f}%"
assert by.most_common(1)[0][0] == "Client:ClientRead", by.most_common(3)
PY
pass "pgbench -C's one-transaction backends keep their wait events"

# 4. A wall-clock profile carries the wait events too: pg_sleep(1) is ~1 s
# of Timeout:PgSleep there, beside the backend's on-CPU time.
record_pg --wall --labels default,pid -o "$WORK/wall.pb.gz"
t0=$(date +%s.%N)
SLEEP_PID=$(psql_pg -c 'select pg_backend_pid(), pg_sleep(1)' | cut -d'|' -f1)
t1=$(date +%s.%N)
stop_record
python3 - "$WORK/wall.pb.gz" "$SLEEP_PID" "$(python3 -c "print($t1 - $t0)")" <<'PY' || fail "wall-clock wait events"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
pid, lived = sys.argv[2], float(sys.argv[3])
assert p.sample_types == ["samples/count", "time/nanoseconds"], p.sample_types
got = sum(s["values"][1] for s in p.samples if s["labels"].get("pid") == pid and
          s["labels"].get("wait_event") == "Timeout:PgSleep") / 1e9
print(f"pid {pid}: Timeout:PgSleep {got:.3f} s in the wall-clock profile; it lived {lived:.3f} s")
assert 0.95 <= got <= lived, f"Timeout:PgSleep {got:.3f} s"
PY
pass "a wall-clock profile of postgres: pg_sleep(1) is ~1 s of Timeout:PgSleep"

# 5. --split wait_event: an SVG flamegraph whose roots are the wait events,
# a pg_sleep backend's stacks under Timeout:PgSleep, an idle one's under
# Client:ClientRead, each as long as it waited, in time units.
record_pg --off-cpu --off-cpu-period-us 10 --format svg --split wait_event -o "$WORK/split.svg"
session idle2 'select pg_backend_pid();'
t0=$(date +%s.%N)
psql_pg -c 'select pg_sleep(2)' >/dev/null
t_sleep=$(date +%s.%N)
sleep 0.5
echo 'select 1;' >&$idle2_FD
t1=$(date +%s.%N)
exec {idle2_FD}>&-
wait $idle2_PSQL
stop_record
python3 - "$WORK/split.svg" "$(python3 -c "print($t_sleep - $t0)")" \
	"$(python3 -c "print($t1 - $t0)")" <<'PY' || fail "--split wait_event"
import re, sys
import xml.etree.ElementTree as ET
svg, sleep_s, idle_s = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
NS = "{http://www.w3.org/2000/svg}"
TIME = re.compile(r"^(.*) \(([0-9.]+) (s|ms|µs|ns), ([0-9.]+)%\)$")
SCALE = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}
frames = []
for g in ET.parse(svg).getroot().iter(NS + "g"):
    t, r = g.find(NS + "title"), g.find(NS + "rect")
    if t is None or r is None:
        continue
    m = TIME.match(t.text)
    assert m, f"a frame titled in samples, not time: {t.text!r}"
    frames.append({"name": m.group(1), "s": float(m.group(2)) * SCALE[m.group(3)],
                   "x": float(r.get("x")), "w": float(r.get("width")), "y": float(r.get("y"))})
all_y = next(f["y"] for f in frames if f["name"] == "all")
roots = {f["name"]: f for f in frames if f["y"] == all_y - 16}
print("roots:", ", ".join(f"{n} {f['s']:.3f} s" for n, f in sorted(roots.items(), key=lambda x: -x[1]["s"])))
sleep, idle = roots.get("Timeout:PgSleep"), roots.get("Client:ClientRead")
assert sleep and idle, f"no Timeout:PgSleep or Client:ClientRead root: {sorted(roots)}"
assert 1.95 <= sleep["s"] <= sleep_s, f"Timeout:PgSleep {sleep['s']:.3f} s, want 2 s to {sleep_s:.3f} s"
assert idle["s"] >= 0.9 * idle_s, f"Client:ClientRead {idle['s']:.3f} s, an idle connection waited {idle_s:.3f} s"
inside = lambda f, root: root["x"] - 0.05 <= f["x"] and f["x"] + f["w"] <= root["x"] + root["w"] + 0.05
pg_sleep = [f for f in frames if f["name"] == "pg_sleep"]
assert pg_sleep and all(inside(f, sleep) for f in pg_sleep), "pg_sleep outside Timeout:PgSleep"
assert not any(inside(f, idle) for f in pg_sleep), "pg_sleep under Client:ClientRead"
PY
pass "record --split wait_event: Timeout:PgSleep and Client:ClientRead are separate roots, in seconds"
