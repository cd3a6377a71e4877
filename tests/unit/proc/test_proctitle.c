// SPDX-License-Identifier: BSD-2-Clause
/* Labels from process titles: PostgreSQL 15's, real and hand-written, and hostile ones. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "proc/proctitle.h"

/*
 * Criterion hands each case to a fresh process, where pointers into this
 * one's data may be invalid: the strings live in the struct.
 */
struct title_case {
	char comm[17];		/* "": NULL */
	char title[160];
	size_t len;		/* titles hold NULs: not strlen */
	int want_rc;
	char backend_type[PROCTITLE_LABEL_MAX], database[PROCTITLE_LABEL_MAX];
	char user[PROCTITLE_LABEL_MAX];
};

#define CASE(comm, t, rc, bt, db, us) {comm, t, sizeof(t) - 1, rc, bt, db, us}
#define PG(t, bt, db, us) CASE("postgres", t, 1, bt, db, us)

/*
 * Titles as PostgreSQL 15 writes them without a cluster name; the
 * with_cluster test runs each again with cluster names prepended.
 */
static const struct title_case pg_titles[] = {
	/* Seen on a real 15.18 (Debian) server without cluster_name, NUL padding shortened. */
	PG("postgres: checkpointer \0\0\0\0\0\0\0\0", "checkpointer", "", ""),
	PG("postgres: checkpointer performing shutdown checkpoint\0\0", "checkpointer", "", ""),
	PG("postgres: background writer \0\0\0\0\0", "background writer", "", ""),
	PG("postgres: walwriter \0\0\0\0\0\0\0\0\0\0\0", "walwriter", "", ""),
	PG("postgres: autovacuum launcher \0\0\0", "autovacuum launcher", "", ""),
	PG("postgres: autovacuum worker \0\0\0", "autovacuum worker", "", ""),
	PG("postgres: autovacuum worker pgbench\0\0\0", "autovacuum worker", "pgbench", ""),
	PG("postgres: autovacuum worker template1\0", "autovacuum worker", "template1", ""),
	PG("postgres: logical replication launcher \0", "logical replication launcher", "", ""),
	PG("postgres: logical replication worker for subscription 16395 \0\0",
	   "logical replication worker", "", ""),
	PG("postgres: logical replication worker for subscription 16395 sync 16390 \0",
	   "logical replication worker", "", ""),
	PG("postgres: logger \0\0\0\0\0\0\0\0\0\0\0\0", "logger", "", ""),
	PG("postgres: archiver \0\0\0\0", "archiver", "", ""),
	PG("postgres: archiver last was 00000001000000000000000E\0", "archiver", "", ""),
	PG("postgres: archiver last was 00000001000000000000000A.00000028.backup\0", "archiver", "",
	   ""),
	PG("postgres: parallel worker for PID 2304 \0", "parallel worker", "", ""),
	PG("postgres: postgres pgbench [local] idle\0\0\0", "client backend", "pgbench", "postgres"),
	PG("postgres: postgres pgbench [local] UPDATE waiting\0", "client backend", "pgbench",
	   "postgres"),
	PG("postgres: postgres pgbench [local] COMMIT\0\0\0\0\0", "client backend", "pgbench",
	   "postgres"),
	PG("postgres: postgres pgbench [local] idle in transaction\0", "client backend", "pgbench",
	   "postgres"),
	PG("postgres: postgres pgbench [local] VACUUM\0\0", "client backend", "pgbench", "postgres"),
	PG("postgres: postgres pgbench [local] CHECKPOINT\0", "client backend", "pgbench",
	   "postgres"),
	PG("postgres: postgres shop 127.0.0.1(60942) SELECT\0\0", "client backend", "shop",
	   "postgres"),
	PG("postgres: postgres postgres ::1(58676) SELECT\0\0", "client backend", "postgres",
	   "postgres"),
	/* PostgreSQL 15 prints no database for walsenders, logical ones included. */
	PG("postgres: walsender repl [local] streaming 0/BCA2758\0", "walsender", "", "repl"),
	PG("postgres: walsender repl [local] START_REPLICATION\0", "walsender", "", "repl"),
	PG("postgres: walsender repl [local] idle in transaction\0", "walsender", "", "repl"),
	PG("postgres: walreceiver streaming 0/BCA0B60\0\0", "walreceiver", "", ""),
	PG("postgres: startup recovering 00000001000000000000000C\0", "startup", "", ""),
	PG("postgres: startup recovering 00000001000000000000000C waiting\0", "startup", "", ""),
	/* The rest of what PostgreSQL 15 prints. */
	PG("postgres: logger ", "logger", "", ""),
	PG("postgres: archiver failed on 000000010000000000000002", "archiver", "", ""),
	PG("postgres: startup ", "startup", "", ""),
	PG("postgres: startup waiting for 000000010000000000000003", "startup", "", ""),
	PG("postgres: walreceiver restarting at 0/3000000", "walreceiver", "", ""),
	PG("postgres: autovacuum worker my db", "autovacuum worker", "my db", ""),
	PG("postgres: logical replication worker for subscription 16394 ",
	   "logical replication worker", "", ""),
	PG("postgres: logical replication worker for subscription 16394 sync 16385 ",
	   "logical replication worker", "", ""),
	/* PostgreSQL 16's spellings. */
	PG("postgres: logical replication apply worker for subscription 16394 ",
	   "logical replication worker", "", ""),
	PG("postgres: logical replication tablesync worker for subscription 16394 sync 16385 ",
	   "logical replication worker", "", ""),
	PG("postgres: logical replication parallel apply worker for subscription 16394 ",
	   "logical replication worker", "", ""),
	/* Client backends: hosts, activities, and the phases before the first query. */
	PG("postgres: alice shop [local] SELECT", "client backend", "shop", "alice"),
	PG("postgres: alice shop [local] ", "client backend", "shop", "alice"),
	PG("postgres: alice shop 127.0.0.1(52466) idle", "client backend", "shop", "alice"),
	PG("postgres: alice shop 127.0.0.1(52466) INSERT", "client backend", "shop", "alice"),
	PG("postgres: alice shop ::1(40000) idle in transaction (aborted)", "client backend",
	   "shop", "alice"),
	PG("postgres: alice shop fe80::1%eth0(40000) SELECT waiting", "client backend", "shop",
	   "alice"),
	PG("postgres: alice shop db.example.com(5432) authentication", "client backend", "shop",
	   "alice"),
	PG("postgres: alice shop 10.1.2.3(5432) startup", "client backend", "shop", "alice"),
	PG("postgres: alice shop [local] initializing", "client backend", "shop", "alice"),
	/* Names are unquoted: a user named like a role is still a client... */
	PG("postgres: checkpointer shop [local] idle", "client backend", "shop", "checkpointer"),
	/* ...and a space splits user from database at the first one. */
	PG("postgres: alice my shop [local] idle", "client backend", "my shop", "alice"),
	PG("postgres: walsender repl 10.0.0.5(41234) streaming 0/3000148", "walsender", "", "repl"),
	/* Later versions (17's backend_startup.c) print a logical walsender's database. */
	PG("postgres: walsender repl shop ::1(41234) idle", "walsender", "shop", "repl"),
	PG("postgres: walsender repl shop [local] START_REPLICATION", "walsender", "shop", "repl"),
	PG("postgres: walsender repl 10.0.0.5(41234) ", "walsender", "", "repl"),
	/* Other background workers: their bgw_name, digits folded. */
	PG("postgres: pg_cron launcher ", "background worker pg_cron launcher", "", ""),
	PG("postgres: my worker 42 ", "background worker my worker N", "", ""),
	PG("postgres: TimescaleDB Background Worker Scheduler 16384 ",
	   "background worker TimescaleDB Background Worker Scheduler N", "", ""),
	PG("postgres: a 1 22 333 4444b5", "background worker a N N N NbN", "", ""),
	/* Space padding (setproctitle elsewhere) is the same as NUL padding. */
	PG("postgres: walwriter                                ", "walwriter", "", ""),
	/* After the NUL is padding, whatever it holds. */
	PG("postgres: checkpointer \0postgres: alice shop [local] idle", "checkpointer", "", ""),
};

/* Everything else: the postmaster, other programs, hostile titles. */
static const struct title_case other_titles[] = {
	/* The postmaster keeps the argv pg_ctl gave it (seen on the real server). */
	CASE("postgres",
	     "/usr/lib/postgresql/15/bin/postgres\0-D\0/tmp/ptpg\0-p\0005499\0-k\0/tmp\0-c\0"
	     "listen_addresses=\0-c\0cluster_name=15/main\0", 1, "postmaster", "", ""),
	CASE("postgres",
	     "/usr/lib/postgresql/15/bin/postgres\0-D\0/var/lib/postgresql/15/main\0-c\0"
	     "config_file=/etc/postgresql/15/main/postgresql.conf\0", 1, "postmaster", "", ""),
	CASE("postmaster", "/usr/local/pgsql/bin/postmaster\0-D\0/data\0", 1, "postmaster", "", ""),
	/* comm as read from /proc/PID/comm, newline included. */
	CASE("postgres\n", "postgres\0-D\0/data\0", 1, "postmaster", "", ""),
	/* Other programs: not labelled. */
	CASE("bash", "bash\0-c\0echo postgres: checkpointer\0", 0, "", "", ""),
	CASE("postgres-exporter", "/bin/postgres_exporter\0", 0, "", "", ""),
	CASE("", "sleep\0001000\0", 0, "", "", ""),
	CASE("bash", "postgres:checkpointer", 0, "", "", ""),
	/* A postgres with no cmdline (a zombie, a kernel read race) is not the postmaster. */
	CASE("postgres", "", 0, "", "", ""),
	CASE("postgres", "\0\0\0", 0, "", "", ""),
	/* The title decides, not the comm: documented in proctitle.h. */
	CASE("evil", "postgres: checkpointer ", 1, "checkpointer", "", ""),
	CASE("evil", "postgres: mallory bank 10.0.0.9(1) idle", 1, "client backend", "bank",
	     "mallory"),
	CASE("", "postgres: 15/main: walwriter ", 1, "walwriter", "", ""),
	/* Control characters and bytes that are not UTF-8 become '?'; UTF-8 stays. */
	CASE("postgres", "postgres: al\x01ice sh\x7fop [local] idle", 1, "client backend", "sh?op",
	     "al?ice"),
	CASE("postgres", "postgres: \xff\xfeuser caf\xc3\xa9 [local] idle", 1, "client backend",
	     "caf\xc3\xa9", "??user"),
	CASE("postgres", "postgres: \xc0\xaf \xed\xa0\x80 [local] idle", 1, "client backend",
	     "???", "??"),
	CASE("postgres", "postgres: \xc2\x85x\tw \x1b[31m [local] idle", 1, "client backend",
	     "?[31m", "?x?w"),
	CASE("postgres", "postgres: my worker \xe2\x82", 1, "background worker my worker ??", "",
	     ""),
	CASE("postgres", "postgres: \xf0\x9f\x90\x98 worker 7", 1,
	     "background worker \xf0\x9f\x90\x98 worker N", "", ""),
	/* Seen on the real server with cluster names "15/main", "prod cluster", "startup db". */
	CASE("postgres", "postgres: 15/main: checkpointer \0\0\0", 1, "checkpointer", "", ""),
	CASE("postgres", "postgres: 15/main: walsender repl [local] streaming 0/BC9D3D0\0", 1,
	     "walsender", "", "repl"),
	CASE("postgres", "postgres: 15/main: postgres pgbench [local] UPDATE waiting\0", 1,
	     "client backend", "pgbench", "postgres"),
	CASE("postgres", "postgres: prod cluster: startup recovering 00000001000000000000000B\0",
	     1, "startup", "", ""),
	CASE("postgres", "postgres: prod cluster: walreceiver streaming 0/BCA2000\0", 1,
	     "walreceiver", "", ""),
	CASE("postgres", "postgres: startup db: checkpointer \0\0", 1, "checkpointer", "", ""),
	CASE("postgres", "postgres: startup db: postgres shop 127.0.0.1(60942) idle\0", 1,
	     "client backend", "shop", "postgres"),
	CASE("postgres", "postgres: startup db: logical replication worker for subscription 16395 ",
	     1, "logical replication worker", "", ""),
	/* Cluster names: with ": ", starting with a role's name. */
	CASE("postgres", "postgres: a: b: checkpointer ", 1, "checkpointer", "", ""),
	CASE("postgres", "postgres: a: b: alice shop [local] idle", 1, "client backend", "shop",
	     "alice"),
	CASE("postgres", "postgres: startup db: walwriter ", 1, "walwriter", "", ""),
	CASE("postgres", "postgres: logger x: autovacuum worker shop", 1, "autovacuum worker",
	     "shop", ""),
	/* Limits documented in proctitle.h. */
	CASE("postgres", "postgres: Citus Maintenance Daemon: 16384/10 ", 1,
	     "background worker N/N", "", ""),
	CASE("postgres", "postgres: walsender shop [local] idle", 1, "walsender", "", "shop"),
	CASE("postgres", "postgres: alice shop [loc", 1, "background worker alice shop [loc", "",
	     ""),
	CASE("postgres", "postgres: ", 1, "background worker", "", ""),
	CASE("postgres", "postgres:   \0", 1, "background worker", "", ""),
};

static void check(const struct title_case *c, const char *title, size_t len)
{
	struct proctitle pt;
	int rc;

	memset(&pt, 0x5a, sizeof(pt));	/* out must be fully rewritten */
	rc = proctitle__parse(c->comm[0] ? c->comm : NULL, title, len, &pt);
	cr_assert_eq(rc, c->want_rc, "%.*s: rc %d", (int)len, title, rc);
	cr_assert_str_eq(pt.backend_type, c->backend_type, "%.*s", (int)len, title);
	cr_assert_str_eq(pt.database, c->database, "%.*s", (int)len, title);
	cr_assert_str_eq(pt.user, c->user, "%.*s", (int)len, title);
}

ParameterizedTestParameters(proctitle, no_cluster)
{
	return cr_make_param_array(struct title_case, pg_titles,
				   sizeof(pg_titles) / sizeof(pg_titles[0]));
}

ParameterizedTest(const struct title_case *c, proctitle, no_cluster)
{
	check(c, c->title, c->len);
}

/* Every postgres title again, as "postgres: CLUSTER: PART". */
ParameterizedTestParameters(proctitle, with_cluster)
{
	return cr_make_param_array(struct title_case, pg_titles,
				   sizeof(pg_titles) / sizeof(pg_titles[0]));
}

ParameterizedTest(const struct title_case *c, proctitle, with_cluster)
{
	static const char *const clusters[] = {"15/main", "prod cluster", "main"};
	const size_t skip = strlen("postgres: ");
	char buf[256];

	for (size_t i = 0; i < sizeof(clusters) / sizeof(clusters[0]); i++) {
		int n = snprintf(buf, sizeof(buf), "postgres: %s: ", clusters[i]);

		cr_assert_lt(n + c->len - skip, sizeof(buf));
		memcpy(buf + n, c->title + skip, c->len - skip);
		check(c, buf, n + c->len - skip);
	}
}

ParameterizedTestParameters(proctitle, others)
{
	return cr_make_param_array(struct title_case, other_titles,
				   sizeof(other_titles) / sizeof(other_titles[0]));
}

ParameterizedTest(const struct title_case *c, proctitle, others)
{
	check(c, c->title, c->len);
}

/* No state between calls: a title that changes is read afresh each time. */
Test(proctitle, title_changes)
{
	static const char t1[] = "postgres: autovacuum worker shop";
	static const char t2[] = "postgres: autovacuum worker ";
	static const char t3[] = "postgres: alice shop [local] authentication";
	static const char t4[] = "postgres: alice shop [local] idle in transaction";
	struct proctitle pt;

	cr_assert_eq(proctitle__parse("postgres", t1, sizeof(t1) - 1, &pt), 1);
	cr_assert_str_eq(pt.database, "shop");
	cr_assert_eq(proctitle__parse("postgres", t2, sizeof(t2) - 1, &pt), 1);
	cr_assert_str_eq(pt.backend_type, "autovacuum worker");
	cr_assert_str_eq(pt.database, "", "the previous title's database leaked");
	cr_assert_eq(proctitle__parse("postgres", t3, sizeof(t3) - 1, &pt), 1);
	cr_assert_eq(proctitle__parse("postgres", t4, sizeof(t4) - 1, &pt), 1);
	cr_assert_str_eq(pt.backend_type, "client backend");
	cr_assert_str_eq(pt.user, "alice");
	cr_assert_str_eq(pt.database, "shop");
}

Test(proctitle, sanitize)
{
	char out[PROCTITLE_LABEL_MAX];
	char big[200];

	proctitle__sanitize(out, "postgres", 16);
	cr_assert_str_eq(out, "postgres");
	proctitle__sanitize(out, "a\x01" "b\xff" "c\xc3\xa9", 16);
	cr_assert_str_eq(out, "a?b?c\xc3\xa9", "controls and invalid bytes become '?'");
	proctitle__sanitize(out, "worker 42", 4);
	cr_assert_str_eq(out, "work", "at most n bytes");
	proctitle__sanitize(out, NULL, 16);
	cr_assert_str_eq(out, "");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	proctitle__sanitize(out, big, sizeof(big));
	cr_assert_eq(strlen(out), PROCTITLE_LABEL_MAX - 1);
}

Test(proctitle, bad_arguments)
{
	struct proctitle pt;

	cr_assert_eq(proctitle__parse("postgres", "x", 1, NULL), -EINVAL);
	cr_assert_eq(proctitle__parse("postgres", NULL, 5, &pt), -EINVAL);
	cr_assert_eq(proctitle__parse("postgres", NULL, 0, &pt), 0);
	cr_assert_str_eq(pt.backend_type, "");
	cr_assert_eq(proctitle__parse(NULL, NULL, 0, &pt), 0);
}

/* Labels a pprof consumer can print: valid UTF-8, no control characters, bounded. */
static void assert_printable(const char *s)
{
	wchar_t w[PROCTITLE_LABEL_MAX];
	size_t n;

	cr_assert_lt(strlen(s), PROCTITLE_LABEL_MAX);
	n = mbstowcs(w, s, PROCTITLE_LABEL_MAX);
	cr_assert_neq(n, (size_t)-1, "not UTF-8: %s", s);
	for (size_t i = 0; i < n; i++)
		cr_assert(iswprint(w[i]), "unprintable U+%04X in %s", (unsigned)w[i], s);
}

static void assert_all_printable(const struct proctitle *pt)
{
	assert_printable(pt->backend_type);
	assert_printable(pt->database);
	assert_printable(pt->user);
}

static void utf8_locale(void)
{
	cr_assert_not_null(setlocale(LC_ALL, "C.UTF-8"));
}

/* Long titles: cut at 63 bytes, never mid-character, whatever the length given. */
Test(proctitle, long_titles, .init = utf8_locale)
{
	static char big[65536];
	struct proctitle pt;
	char t[512];
	int n;

	memset(big, 'a', sizeof(big));
	cr_assert_eq(proctitle__parse("postgres", big, sizeof(big), &pt), 1);
	cr_assert_str_eq(pt.backend_type, "postmaster");
	cr_assert_eq(proctitle__parse("bash", big, sizeof(big), &pt), 0);

	memcpy(big, "postgres: ", 10);
	cr_assert_eq(proctitle__parse("bash", big, sizeof(big), &pt), 1);
	cr_assert_eq(strlen(pt.backend_type), PROCTITLE_LABEL_MAX - 1);
	cr_assert(!strncmp(pt.backend_type, "background worker aaaa", 22), "%s", pt.backend_type);
	assert_all_printable(&pt);

	/* ": " over and over: a bounded number of cluster names are tried. */
	for (size_t i = 10; i + 1 < sizeof(big); i += 2)
		memcpy(big + i, ": ", 2);
	cr_assert_eq(proctitle__parse("postgres", big, sizeof(big), &pt), 1);
	assert_all_printable(&pt);

	/* A 200-byte user name. */
	n = snprintf(t, sizeof(t), "postgres: %0200d shop [local] idle", 7);
	memset(t + 10, 'u', 200);
	cr_assert_eq(proctitle__parse("postgres", t, n, &pt), 1);
	cr_assert_str_eq(pt.backend_type, "client backend");
	cr_assert_eq(strlen(pt.user), PROCTITLE_LABEL_MAX - 1);
	cr_assert_eq(strspn(pt.user, "u"), PROCTITLE_LABEL_MAX - 1);
	cr_assert_str_eq(pt.database, "shop");

	/* 62 bytes then a 2-byte character: the character does not fit and is dropped whole. */
	n = snprintf(t, sizeof(t), "postgres: %062d\xc3\xa9 shop [local] idle", 0);
	cr_assert_eq(proctitle__parse("postgres", t, n, &pt), 1);
	cr_assert_eq(strlen(pt.user), 62);
	assert_all_printable(&pt);

	/* A bgworker name of 40 digit runs folds before it is cut. */
	n = snprintf(t, sizeof(t), "postgres: w");
	for (int i = 0; i < 40; i++)
		n += snprintf(t + n, sizeof(t) - n, "%d.", i * 7919);
	cr_assert_eq(proctitle__parse("postgres", t, n, &pt), 1);
	cr_assert(!strncmp(pt.backend_type, "background worker wN.N.N.", 25), "%s",
		  pt.backend_type);
	cr_assert_eq(strlen(pt.backend_type), PROCTITLE_LABEL_MAX - 1);
}

/* Every byte value in every position of a client title: labels stay printable. */
Test(proctitle, every_byte, .init = utf8_locale)
{
	char t[] = "postgres: 15/main: alice\xc3\xa9 shop 127.0.0.1(5432) idle";
	struct proctitle pt;

	for (size_t pos = 0; pos < sizeof(t) - 1; pos++) {
		char saved = t[pos];

		for (int b = 0; b < 256; b++) {
			t[pos] = (char)b;
			cr_assert_geq(proctitle__parse("postgres", t, sizeof(t) - 1, &pt), 0);
			assert_all_printable(&pt);
		}
		t[pos] = saved;
	}
}
