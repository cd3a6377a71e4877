# Debian's postgresql-15 in a temporary data directory, as the postgres
# user, on a Unix socket in $WORK.  Source after common.sh; sets PGBIN,
# PGDATA, PGPORT, PM (the postmaster's pid), as_pg, psql_pg, pgbench_run
# and record_pg; stops the server on exit.  PGSCALE: pgbench's
# scale factor (default 1); PG_ENV: VAR=VALUE words for the server's environment.
PGBIN=/usr/lib/postgresql/15/bin
[ -x $PGBIN/postgres ] || fail "postgresql-15 is not installed"
PGDATA=$WORK/pgdata PGPORT=$((20000 + RANDOM % 20000))
mkdir -p "$PGDATA" && chown postgres: "$PGDATA" "$WORK"
as_pg() { runuser -u postgres -- "$@"; }
# psql_pg ARGS...: psql as postgres on this server, unaligned, tuples only.
psql_pg() { as_pg $PGBIN/psql -h "$WORK" -p $PGPORT -X -q -At "$@" postgres; }
as_pg $PGBIN/initdb -D "$PGDATA" -A trust >/dev/null
as_pg env ${PG_ENV:-} $PGBIN/pg_ctl -D "$PGDATA" -l "$WORK/pg.log" -w \
	-o "-p $PGPORT -k $WORK -c listen_addresses=''" start >/dev/null
stop_pg() { as_pg $PGBIN/pg_ctl -D "$PGDATA" -m immediate stop >/dev/null 2>&1 || true; cleanup_common; }
trap stop_pg EXIT
as_pg $PGBIN/pgbench -h "$WORK" -p $PGPORT -i -s "${PGSCALE:-1}" postgres >/dev/null 2>&1
# pgbench_run ARGS...: pgbench against it; output in $WORK/pgbench.out.
pgbench_run() {
	as_pg $PGBIN/pgbench -h "$WORK" -p $PGPORT "$@" postgres >"$WORK/pgbench.out" 2>&1 ||
		{ cat "$WORK/pgbench.out"; fail "pgbench failed"; }
}
PM=$(head -1 "$PGDATA/postmaster.pid")

# record_pg ARGS...: start_record of the postmaster and its backends, then
# connections until the daemon's debug log says it knows where the
# postmaster's wait event is.  The postmaster was running before profd:
# the daemon learns where its title and wait event are from its /proc
# scan at start (or, missed there, at the postmaster's next fork), and its
# later children inherit them at fork; backends forked before that have no
# wait_event until the daemon has seen them too (docs/api.md).
record_pg() {
	start_record --seconds 600 --pid $PM --log-level debug "$@"
	for _ in $(seq 120); do
		psql_pg -c 'select 1' >/dev/null
		grep -q "postgres process $PM: .* wait event at" "$WORK/record.err" && return 0
		sleep 0.25
	done
	grep 'postgres process' "$WORK/record.err"
	fail "profd did not learn where the postmaster's wait event is in 120 connections"
}
