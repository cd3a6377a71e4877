// SPDX-License-Identifier: BSD-2-Clause
/*
 * The title cache over a directory laid out like /proc: read once, re-read
 * only after the interval (titles change mid-profile), exited processes
 * keep their labels, untitled postgres children get none, bounded.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/pgexe.h"
#include "proc/titles.h"

#define SEC 1000000000ll

static char root[64];

static void root_setup(void)
{
	strcpy(root, "/tmp/profd-titles.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void root_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
}

static void put(int pid, const char *name, const char *data, size_t len)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/%s", root, pid, name);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* PID/exe -> ROOT/bin/NAME, a file root owns with mode. */
static void exe(int pid, const char *name, mode_t mode, uid_t uid)
{
	char path[160], target[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bin", root);
	mkdir(path, 0755);
	snprintf(target, sizeof(target), "%s/bin/%s", root, name);
	f = fopen(target, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(chown(target, uid, 0), 0);
	cr_assert_eq(chmod(target, mode), 0);
	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/exe", root, pid);
	unlink(path);
	cr_assert_eq(symlink(target, path), 0);
}

/* A process: comm, title (cmdline, NULs allowed via len) and parent; its
 * executable is root's, named as its comm. */
static void proc(int pid, int ppid, const char *comm, const char *title, size_t len)
{
	char buf[128];

	exe(pid, comm, 0755, 0);
	snprintf(buf, sizeof(buf), "%s\n", comm);
	put(pid, "comm", buf, strlen(buf));
	put(pid, "cmdline", title, len);
	snprintf(buf, sizeof(buf), "%d (%s) S %d 1 1 0 -1\n", pid, comm, ppid);
	put(pid, "stat", buf, strlen(buf));
}

#define PROC(pid, ppid, comm, t) proc(pid, ppid, comm, t, sizeof(t) - 1)

static void gone(int pid)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%d'", root, pid);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(titles, .init = root_setup, .fini = root_teardown);

Test(titles, read_once_then_rate_limited)
{
	struct titles *t = titles__new(root, 16, SEC);
	const struct proctitle *pt;
	struct titles_stats st;

	PROC(100, 1, "postgres", "postgres: 15/main: checkpointer \0\0");
	pt = titles__get(t, 100, 10 * SEC);
	cr_assert_not_null(pt);
	cr_assert_str_eq(pt->backend_type, "checkpointer");
	for (int i = 0; i < 1000; i++)
		titles__get(t, 100, 10 * SEC + i * 100000);	/* 1000 samples in 0.1 s */
	titles__stats(t, &st);
	cr_assert_eq(st.reads, 1, "%lu reads: not rate-limited", (unsigned long)st.reads);
	cr_assert_eq(st.processes, 1);
	titles__free(t);
}

Test(titles, title_changes_mid_profile)
{
	struct titles *t = titles__new(root, 16, SEC);
	const struct proctitle *pt;

	/* An autovacuum worker names its database once it has picked one. */
	PROC(200, 100, "postgres", "postgres: autovacuum worker ");
	pt = titles__get(t, 200, 0);
	cr_assert_str_eq(pt->backend_type, "autovacuum worker");
	cr_assert_str_eq(pt->database, "");
	PROC(200, 100, "postgres", "postgres: autovacuum worker shop");
	pt = titles__get(t, 200, TITLES_PROVISIONAL_NS / 2);
	cr_assert_str_eq(pt->database, "", "re-read before the interval");
	pt = titles__get(t, 200, TITLES_PROVISIONAL_NS);
	cr_assert_str_eq(pt->database, "shop", "not re-read soon");
	/* A client backend's title changes with every query: read once a second. */
	PROC(210, 100, "postgres", "postgres: alice shop [local] idle");
	pt = titles__get(t, 210, 0);
	cr_assert_str_eq(pt->user, "alice");
	PROC(210, 100, "postgres", "postgres: bob shop [local] idle");
	pt = titles__get(t, 210, SEC / 2);
	cr_assert_str_eq(pt->user, "alice", "re-read before the interval");
	pt = titles__get(t, 210, SEC);
	cr_assert_str_eq(pt->user, "bob", "not re-read after the interval");
	/* It exits: what it said last stays, and /proc is not tried again. */
	gone(200);
	pt = titles__get(t, 200, 3 * SEC);
	cr_assert_not_null(pt);
	cr_assert_str_eq(pt->database, "shop");
	titles__exited(t, 200, 3 * SEC);
	struct titles_stats before, after;
	titles__stats(t, &before);
	titles__get(t, 200, 10 * SEC);
	titles__stats(t, &after);
	cr_assert_eq(after.reads, before.reads, "an exited process was read again");
	titles__free(t);
}

Test(titles, pid_reuse)
{
	struct titles *t = titles__new(root, 16, SEC);
	const struct proctitle *pt;

	PROC(300, 100, "postgres", "postgres: alice shop [local] idle");
	pt = titles__get(t, 300, 0);
	cr_assert_str_eq(pt->user, "alice");
	titles__exited(t, 300, 1);
	PROC(300, 1, "bash", "bash\0-c\0true");
	titles__stale(t, 300, 0);
	pt = titles__get(t, 300, 1);
	cr_assert_not_null(pt);
	cr_assert_str_eq(pt->backend_type, "", "the old process's labels stuck to the new one");
	cr_assert_str_eq(pt->user, "");
	titles__free(t);
}

/* The dead go once no profile can hold their samples; the living, those
 * whose exit came later, and a pid reused since, stay. */
Test(titles, expire_exited)
{
	struct titles *t = titles__new(root, 64, SEC);
	struct titles_stats st;
	const struct proctitle *pt;

	for (int pid = 700; pid < 720; pid++) {
		PROC(pid, 100, "postgres", "postgres: alice shop [local] idle");
		cr_assert_not_null(titles__get(t, pid, 0));
	}
	for (int pid = 700; pid < 710; pid++)
		titles__exited(t, pid, 5 * SEC);
	titles__exited(t, 710, 20 * SEC);
	/* 705 exited, then its pid went to a new process. */
	PROC(705, 1, "bash", "bash");
	titles__stale(t, 705, 0);
	titles__expire(t, 10 * SEC);
	titles__stats(t, &st);
	cr_assert_eq(st.expired, 9, "expired %lu", (unsigned long)st.expired);
	cr_assert_eq(st.processes, 11, "%zu left", st.processes);
	for (int pid = 711; pid < 720; pid++) {
		pt = titles__get(t, pid, 1);
		cr_assert_not_null(pt, "pid %d lost", pid);
		cr_assert_str_eq(pt->user, "alice", "pid %d's labels moved", pid);
	}
	gone(710);
	pt = titles__get(t, 710, 2);
	cr_assert_not_null(pt, "exited after the bound and dropped");
	cr_assert_str_eq(pt->database, "shop");
	cr_assert_not_null(titles__get(t, 705, 3), "a reused pid dropped");
	titles__stats(t, &st);
	cr_assert_eq(st.processes, 11, "expired entries came back: %zu", st.processes);
	/* Nothing left to keep them for: only 705's new process stays. */
	for (int pid = 711; pid < 720; pid++)
		titles__exited(t, pid, 30 * SEC);
	titles__expire(t, 40 * SEC);
	titles__stats(t, &st);
	cr_assert_eq(st.processes, 1, "%zu left", st.processes);
	cr_assert_str_eq(titles__get(t, 705, 4)->backend_type, "");
	titles__free(t);
}

/* Looked up only after its exit was reported (its samples drained late):
 * marked gone by its exit title, or by /proc, and expired like the rest. */
Test(titles, expire_looked_up_after_exit)
{
	struct titles *t = titles__new(root, 64, SEC);
	static const char title[] = "postgres: alice shop [local] idle";
	struct titles_stats st;

	/* Its exit title came, and its EXIT event found no entry. */
	titles__exit_title(t, 730, "postgres", title, sizeof(title) - 1, false, 5 * SEC);
	titles__exited(t, 730, 5 * SEC);
	cr_assert_str_eq(titles__get(t, 730, 6 * SEC)->user, "alice");
	/* No exit title: /proc says it is gone. */
	titles__exited(t, 731, 5 * SEC);
	cr_assert_null(titles__get(t, 731, 6 * SEC));
	titles__stats(t, &st);
	cr_assert_eq(st.processes, 2);
	titles__expire(t, 5 * SEC + SEC / 2);
	titles__stats(t, &st);
	cr_assert_eq(st.processes, 1, "731 was read gone at 6 s: kept until then");
	titles__expire(t, 7 * SEC);
	titles__stats(t, &st);
	cr_assert_eq(st.processes, 0, "%zu left", st.processes);
	titles__free(t);
}

Test(titles, unknown_and_exited_before_read)
{
	struct titles *t = titles__new(root, 16, SEC);

	cr_assert_null(titles__get(t, 4242, 0), "a process that never existed has labels");
	cr_assert_null(titles__get(t, 0, 0));
	cr_assert_null(titles__get(t, -1, 0));
	cr_assert_null(titles__get(NULL, 1, 0));
	titles__stale(NULL, 1, 0);
	titles__exited(NULL, 1, 0);
	titles__expire(NULL, 0);
	titles__free(NULL);
	titles__free(t);
}

Test(titles, untitled_postgres_child)
{
	static const char argv[] = "/usr/lib/postgresql/15/bin/postgres\0-D\0/var/lib/pg\0";
	struct titles *t = titles__new(root, 16, SEC);
	const struct proctitle *pt;

	/* The postmaster: its parent is init. */
	PROC(400, 1, "postgres", argv);
	pt = titles__get(t, 400, 0);
	cr_assert_not_null(pt);
	cr_assert_str_eq(pt->backend_type, "postmaster");
	/* Just forked: the postmaster's argv still, so no labels yet... */
	PROC(401, 400, "postgres", argv);
	cr_assert_null(titles__get(t, 401, 0));
	/* ...and read again soon (not after a whole second) once it has a title. */
	PROC(401, 400, "postgres", "postgres: alice shop [local] authentication");
	cr_assert_null(titles__get(t, 401, TITLES_PROVISIONAL_NS / 2));
	pt = titles__get(t, 401, TITLES_PROVISIONAL_NS);
	cr_assert_not_null(pt);
	cr_assert_str_eq(pt->backend_type, "client backend");
	cr_assert_str_eq(pt->database, "shop");
	titles__free(t);
}

Test(titles, hostile_title)
{
	char big[PROCTITLE_SCAN_MAX * 4];
	struct titles *t = titles__new(root, 16, SEC);
	const struct proctitle *pt;

	memset(big, 'x', sizeof(big));
	memcpy(big, "postgres: \xff\x01 ", 13);
	proc(500, 1, "evil", big, sizeof(big));
	pt = titles__get(t, 500, 0);
	cr_assert_not_null(pt);
	cr_assert_lt(strlen(pt->backend_type), PROCTITLE_LABEL_MAX);
	for (const char *p = pt->backend_type; *p; p++)
		cr_assert((unsigned char)*p >= 0x20 && *p != 0x7f, "unsanitized byte %#x", *p);
	titles__free(t);
}

Test(titles, bounded)
{
	struct titles *t = titles__new(root, 64, SEC);
	struct titles_stats st;

	for (int pid = 1000; pid < 1300; pid++) {
		PROC(pid, 1, "postgres", "postgres: walwriter ");
		cr_assert_not_null(titles__get(t, pid, 0));
		titles__stats(t, &st);
		cr_assert_leq(st.processes, 64);
	}
	cr_assert_gt(st.evictions, 0);
	/* The most recent ones are still there, without a read. */
	titles__stats(t, &st);
	uint64_t reads = st.reads;
	cr_assert_not_null(titles__get(t, 1299, 1));
	titles__stats(t, &st);
	cr_assert_eq(st.reads, reads);
	titles__free(t);
}

Test(titles, forks_watched)
{
	static const int64_t steps[TITLES_WATCH_STEPS] = TITLES_WATCH_NS;
	struct titles *t = titles__new(root, 16, SEC);
	const struct proctitle *pt;
	struct titles_stats st;

	/* Forked at 0, titled by the first watch, gone before any sample. */
	PROC(600, 1, "postgres", "postgres: bob shop [local] idle");
	titles__watch(t, 600, 0);
	cr_assert_eq(titles__poll(t, steps[0] - 1), steps[0], "nothing due yet");
	titles__stats(t, &st);
	cr_assert_eq(st.reads, 0);
	cr_assert_eq(titles__poll(t, steps[0]), steps[1], "the second read is next");
	titles__stats(t, &st);
	cr_assert_eq(st.reads, 1);
	gone(600);
	for (int i = 1; i < TITLES_WATCH_STEPS - 1; i++)
		cr_assert_eq(titles__poll(t, steps[i]), steps[i + 1]);
	cr_assert_eq(titles__poll(t, steps[TITLES_WATCH_STEPS - 1]), -1, "done after the last step");
	pt = titles__get(t, 600, steps[TITLES_WATCH_STEPS - 1] + 1);
	cr_assert_not_null(pt, "a watched process that exited lost its labels");
	cr_assert_str_eq(pt->user, "bob");
	titles__free(t);
}

Test(titles, watch_bounded)
{
	struct titles *t = titles__new(root, 16, SEC);
	struct titles_stats st;

	for (int i = 0; i < TITLES_WATCH_MAX + 10; i++)
		titles__watch(t, 10000 + i, 0);
	titles__stats(t, &st);
	cr_assert_eq(st.watch_full, 10);
	/* None exist: every read fails.  A poll reads at most TITLES_POLL_MAX
	 * and says the rest is due now. */
	cr_assert_eq(titles__poll(t, 10 * SEC), 10 * SEC);
	for (int i = 0; i < TITLES_WATCH_STEPS * TITLES_WATCH_MAX / TITLES_POLL_MAX; i++)
		titles__poll(t, 20 * SEC);
	cr_assert_eq(titles__poll(t, 20 * SEC), -1);
	titles__stats(t, &st);
	cr_assert_leq(st.processes, 16);
	titles__free(t);
}

/* Titles the kernel side read at exit_group: what labels a process gone
 * before /proc was read. */
Test(titles, exit_titles)
{
	static const char argv[] = "/usr/lib/postgresql/15/bin/postgres\0-D\0/var/lib/pg\0";
	static const char idle[] = "postgres: alice shop [local] idle";
	struct titles *t = titles__new(root, 16, SEC);
	struct titles_stats st;
	const struct proctitle *pt;
	char big[TITLES_EXIT_TITLE_MAX + 64];

	/* Gone before any read: its exit title labels it, at its first lookup. */
	titles__exit_title(t, 500, "postgres", idle, sizeof(idle), true, 0);
	pt = titles__get(t, 500, 0);
	cr_assert_not_null(pt);
	cr_assert_str_eq(pt->backend_type, "client backend");
	cr_assert_str_eq(pt->database, "shop");
	cr_assert_str_eq(pt->user, "alice");

	/* Looked up before it exited, while still untitled (provisional): the
	 * exit title fills its entry in. */
	PROC(400, 1, "postgres", argv);
	PROC(501, 400, "postgres", argv);
	cr_assert_null(titles__get(t, 501, 0));
	gone(501);
	titles__exit_title(t, 501, "postgres", idle, sizeof(idle), true, 0);
	pt = titles__get(t, 501, 1);
	cr_assert_not_null(pt);
	cr_assert_str_eq(pt->backend_type, "client backend");

	/* Read while alive with a title: the living read stands. */
	PROC(502, 400, "postgres", "postgres: bob db2 [local] idle");
	cr_assert_not_null(titles__get(t, 502, 0));
	titles__exit_title(t, 502, "postgres", idle, sizeof(idle), true, 0);
	cr_assert_str_eq(titles__get(t, 502, 1)->user, "bob");

	/* A forked child that never set its title: no labels, not "postmaster". */
	titles__exit_title(t, 503, "postgres", argv, sizeof(argv), true, 0);
	pt = titles__get(t, 503, 0);
	cr_assert(!pt || !pt->backend_type[0], "an untitled child labelled %s", pt->backend_type);
	/* The postmaster itself exiting is one. */
	titles__exit_title(t, 504, "postgres", argv, sizeof(argv), false, 0);
	cr_assert_str_eq(titles__get(t, 504, 0)->backend_type, "postmaster");

	/* Its pid reused by a new process (stale): the old exit title is not its. */
	titles__exit_title(t, 505, "postgres", idle, sizeof(idle), true, 0);
	titles__stale(t, 505, 0);
	cr_assert_null(titles__get(t, 505, 0));

	/* No NUL within the bound, and hostile bytes: bounded, sanitized. */
	memset(big, 'x', sizeof(big));
	memcpy(big, "postgres: \x01\xff ", 13);
	titles__exit_title(t, 506, "postgres", big, sizeof(big), true, 0);
	pt = titles__get(t, 506, 0);
	if (pt)
		cr_assert_lt(strlen(pt->backend_type), PROCTITLE_LABEL_MAX);

	/* Bounded: the oldest go, and every kept one is still found. */
	for (int pid = 1000; pid < 1000 + 3 * TITLES_EXITS; pid++)
		titles__exit_title(t, pid, "postgres", idle, sizeof(idle), true, 0);
	cr_assert_null(titles__get(t, 1000, 0), "the oldest exit title was kept");
	cr_assert_not_null(titles__get(t, 1000 + 3 * TITLES_EXITS - 1, 0));
	cr_assert_not_null(titles__get(t, 1000 + 2 * TITLES_EXITS, 0));
	titles__stats(t, &st);
	cr_assert_eq(st.exit_titles, 3 * TITLES_EXITS + 7);
	cr_assert_geq(st.exit_titles_used, 4);
	titles__exit_title(NULL, 1, "postgres", idle, sizeof(idle), true, 0);
	titles__exit_title(t, 0, "postgres", idle, sizeof(idle), true, 0);
	titles__free(t);
}

/* A pid reused: the entry holds the old process's labels, marked stale by
 * the new one's fork; the new one's exit title replaces them. */
Test(titles, exit_title_of_a_reused_pid)
{
	static const char idle[] = "postgres: alice shop [local] idle";
	struct titles *t = titles__new(root, 16, SEC);
	const struct proctitle *pt;

	PROC(600, 1, "postgres", "postgres: checkpointer ");
	cr_assert_str_eq(titles__get(t, 600, 0)->backend_type, "checkpointer");
	gone(600);
	titles__stale(t, 600, 0);	/* a new process forked with pid 600 */
	titles__exit_title(t, 600, "postgres", idle, sizeof(idle), true, 0);
	pt = titles__get(t, 600, 1);
	cr_assert_not_null(pt);
	cr_assert_str_eq(pt->backend_type, "client backend");
	titles__free(t);
}

/*
 * A process that sets a postgres-like title is labelled only if it runs a
 * postgres binary only root can change (proc/pgexe.h): not a look-alike
 * named otherwise, nor a user's copy named postgres, nor a root-owned one
 * others may write.
 */
Test(titles, postgres_titles_believed_of_postgres_binaries_only)
{
	static const struct {
		const char *name;
		mode_t mode;
		uid_t uid;
		bool labelled;
	} cases[] = {
		{"postgres", 0755, 0, true},
		{"postmaster", 0755, 0, true},
		{"evil", 0755, 0, false},
		{"postgres", 0755, 65534, false},
		{"postgres", 0775, 0, false},
		{"postgres", 0757, 0, false},
	};
	struct titles *t = titles__new(root, 16, SEC);
	struct titles_stats st;
	uint64_t refused = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct proctitle *pt;
		int pid = 200 + (int)i;

		PROC(pid, 1, "postgres", "postgres: alice payments [local] idle\0");
		exe(pid, cases[i].name, cases[i].mode, cases[i].uid);
		pt = titles__get(t, pid, 10 * SEC);
		cr_assert_not_null(pt);
		cr_expect_eq(!strcmp(pt->user, "alice"), cases[i].labelled, "%s %o uid %d: user '%s'",
			     cases[i].name, (unsigned)cases[i].mode, (int)cases[i].uid, pt->user);
		cr_expect_eq(pt->backend_type[0] != 0, cases[i].labelled);
		refused += !cases[i].labelled;
	}
	titles__stats(t, &st);
	cr_expect_eq(st.not_postgres, refused);
	titles__free(t);
}

/*
 * A backend runs the binary its postmaster was believed of: one stat()
 * says so.  The file changed since (another owner, writable by others) is
 * not taken for the one believed.
 */
Test(titles, believed_binary_remembered)
{
	struct titles *t = titles__new(root, 16, SEC);
	struct titles_stats st;

	for (int pid = 900; pid < 904; pid++) {
		PROC(pid, 1, "postgres", "postgres: alice payments [local] idle\0");
		cr_assert_str_eq(titles__get(t, pid, 0)->user, "alice");
	}
	titles__stats(t, &st);
	cr_expect_eq(st.pg_known, 3, "%lu of 4 by one stat", (unsigned long)st.pg_known);
	/* The same file, now a user's (fopen "w" keeps the inode). */
	PROC(904, 1, "postgres", "postgres: alice payments [local] idle\0");
	exe(904, "postgres", 0755, 65534);
	cr_expect_str_eq(titles__get(t, 904, 0)->user, "", "a user's file believed");
	exe(905, "postgres", 0757, 0);
	PROC(905, 1, "postgres", "postgres: alice payments [local] idle\0");
	exe(905, "postgres", 0757, 0);
	cr_expect_str_eq(titles__get(t, 905, 0)->user, "", "a file others may write believed");
	titles__stats(t, &st);
	cr_expect_eq(st.pg_known, 3);
	cr_expect_eq(st.not_postgres, 2);
	titles__free(t);
}

/* A sample of the main thread names its process: /proc/PID/comm is not
 * read then, and what the caller says is what the rules see. */
Test(titles, comm_from_the_caller)
{
	struct titles *t = titles__new(root, 16, SEC);
	char path[160];

	/* A postmaster's title has no "postgres: ": its comm says what it is. */
	PROC(950, 1, "postgres", "/usr/lib/postgresql/15/bin/postgres\0-D\0/x\0");
	snprintf(path, sizeof(path), "%s/950/comm", root);
	cr_assert_eq(unlink(path), 0);
	cr_expect_str_eq(titles__get_named(t, 950, "postgres", 0)->backend_type, "postmaster");
	/* Named otherwise by the caller, whatever the file says. */
	PROC(951, 1, "postgres", "/usr/lib/postgresql/15/bin/postgres\0-D\0/x\0");
	cr_expect_str_eq(titles__get_named(t, 951, "bash", 0)->backend_type, "");
	/* Without a name, the file is read. */
	PROC(952, 1, "postgres", "/usr/lib/postgresql/15/bin/postgres\0-D\0/x\0");
	cr_expect_str_eq(titles__get_named(t, 952, NULL, 0)->backend_type, "postmaster");
	/* A name of 16 bytes, unterminated, is cut, not read past. */
	PROC(953, 1, "postgres", "postgres: alice payments [local] idle\0");
	cr_expect_str_eq(titles__get_named(t, 953, "0123456789abcdefXXXX", 0)->user, "alice");
	/* Gone: marked exited, not read again. */
	gone(950);
	titles__stale(t, 950, 0);
	titles__get_named(t, 950, "postgres", SEC);
	struct titles_stats before, after;
	titles__stats(t, &before);
	titles__get_named(t, 950, "postgres", 10 * SEC);
	titles__stats(t, &after);
	cr_expect_eq(after.reads, before.reads, "a gone process read again");
	titles__free(t);
}

/*
 * Whether a process runs a postgres binary is asked once per program, not
 * at every re-read of its title; an exec (titles__stale with an event)
 * asks again.
 */
Test(titles, postgres_binary_checked_once_per_program)
{
	struct titles *t = titles__new(root, 16, SEC);
	const struct proctitle *pt;
	int pid = 300;

	PROC(pid, 1, "postgres", "postgres: alice payments [local] idle\0");
	exe(pid, "postgres", 0755, 0);
	pt = titles__get(t, pid, 10 * SEC);
	cr_assert(pt && !strcmp(pt->user, "alice"));
	/* Its exe changes without an exec reported: the verdict stands
	 * (re-reading the title does not check the binary again). */
	PROC(pid, 1, "postgres", "postgres: bob payments [local] idle\0");
	exe(pid, "evil", 0755, 0);	/* after PROC, which links a postgres */
	pt = titles__get(t, pid, 12 * SEC);
	cr_assert(pt && !strcmp(pt->user, "bob"), "re-read: user '%s'", pt ? pt->user : "");
	/* It exec'd: asked again, and refused. */
	titles__stale(t, pid, 13 * SEC);
	pt = titles__get(t, pid, 13 * SEC);
	cr_assert(pt);
	cr_expect_eq(pt->user[0], '\0', "after exec: user '%s'", pt->user);
	titles__free(t);
}

/*
 * The postmasters found at the daemon's start (so their backends inherit
 * title areas from their first fork): postgres processes whose parent is
 * not one, running a postgres binary; not backends, not look-alikes, not
 * a comm that only spells postgres inside a hostile name.
 */
Test(titles, postmasters_found_at_start)
{
	int pids[8], n, found = 0;

	PROC(100, 1, "postgres", "postgres -D /data\0");
	PROC(101, 100, "postgres", "postgres: checkpointer \0");
	PROC(102, 1, "bash", "bash\0");
	PROC(103, 102, "postgres", "postgres\0");
	exe(103, "evil", 0755, 0);		/* named postgres, runs something else */
	PROC(104, 102, "x) S 1 (postgres", "x\0");	/* stat: "104 (x) S 1 (postgres) S 102" */
	PROC(105, 102, "postmaster", "postmaster\0");
	n = pgexe__postmasters(root, pids, 8);
	cr_assert_eq(n, 2, "%d postmasters", n);
	for (int i = 0; i < n; i++)
		found |= (pids[i] == 100) << 0 | (pids[i] == 105) << 1;
	cr_expect_eq(found, 3);
	cr_expect_eq(pgexe__postmasters(root, pids, 1), 1);
	cr_expect_lt(pgexe__postmasters("/nonexistent-proc", pids, 8), 0);
}

/*
 * A title the kernel side read at a process's first sample: its first read,
 * with no /proc read (the process's /proc entry here says something else,
 * so a read would show); a re-read from /proc once the interval has passed;
 * a forked child still untitled is provisional and read from /proc soon; an
 * exit title that follows a live one stands for a process not looked up
 * yet; and a live title does not outlive a new process behind its pid.
 */
Test(titles, live_titles)
{
	static const char argv[] = "/usr/lib/postgresql/15/bin/postgres\0-D\0/var/lib/pg\0";
	static const char idle[] = "postgres: alice shop [local] idle";
	struct titles *t = titles__new(root, 16, SEC);
	struct titles_stats st;
	const struct proctitle *pt;
	uint64_t expired;

	PROC(700, 1, "postgres", "postgres: bob other [local] idle");
	titles__stale(t, 700, 10);	/* its FIRST event */
	titles__live_title(t, 700, "postgres", idle, sizeof(idle), true, 20);
	pt = titles__get(t, 700, 30);
	cr_assert_not_null(pt);
	cr_assert_str_eq(pt->user, "alice", "read from /proc, not taken from the live title");
	cr_assert_str_eq(pt->database, "shop");
	titles__stats(t, &st);
	cr_assert_eq(st.reads, 0);
	cr_assert_eq(st.live_titles, 1);
	cr_assert_eq(st.live_titles_used, 1);
	/* Alive: read again from /proc after the interval. */
	pt = titles__get(t, 700, 20 + SEC);
	cr_assert_str_eq(pt->user, "bob");
	titles__stats(t, &st);
	cr_assert_eq(st.reads, 1);
	cr_assert_eq(st.pg_known + st.not_postgres, 0, "a live title's binary was checked again");

	/* Its entry exists (looked up from /proc, untitled: a postgres
	 * parent's child still showing its command line) before the title
	 * comes. */
	PROC(400, 1, "postgres", argv);
	PROC(701, 400, "postgres", argv);
	cr_assert_null(titles__get(t, 701, 30));
	titles__live_title(t, 701, "postgres", idle, sizeof(idle), true, 40);
	cr_assert_str_eq(titles__get(t, 701, 50)->backend_type, "client backend");

	/* A forked child still showing the postmaster's command line: no
	 * labels from the live title, and /proc read once it is due. */
	PROC(702, 1, "postgres", "postgres: walsender carol [local] idle");
	titles__live_title(t, 702, "postgres", argv, sizeof(argv), true, 100);
	cr_assert_null(titles__get(t, 702, 110));
	pt = titles__get(t, 702, 100 + TITLES_PROVISIONAL_NS);
	cr_assert_not_null(pt);
	cr_assert_str_eq(pt->backend_type, "walsender");
	/* The postmaster itself (not forked) is one. */
	titles__live_title(t, 703, "postgres", argv, sizeof(argv), false, 100);
	cr_assert_str_eq(titles__get(t, 703, 110)->backend_type, "postmaster");

	/* Live, then gone before its lookup: the exit title replaces it. */
	titles__live_title(t, 704, "postgres", "postgres: alice shop [local] starting",
			   sizeof("postgres: alice shop [local] starting"), true, 200);
	titles__exit_title(t, 704, "postgres", idle, sizeof(idle), true, 300);
	pt = titles__get(t, 704, 400);
	cr_assert_str_eq(pt->backend_type, "client backend");
	titles__expire(t, 301);
	titles__stats(t, &st);
	cr_assert_eq(st.expired, 1, "the exited process's entry stayed");

	/* A new process behind the pid, a millisecond later: what the old
	 * one said live is not its (an exit title would be, as it tears
	 * down). */
	gone(705);
	titles__live_title(t, 705, "postgres", idle, sizeof(idle), true, 500);
	titles__stale(t, 705, 500 + 1000000);
	cr_assert_null(titles__get(t, 705, 600 + 1000000));

	/* Its exit reported before its first lookup: the entry the live
	 * title makes is gone, and expires. */
	titles__live_title(t, 706, "postgres", idle, sizeof(idle), true, 700);
	titles__exited(t, 706, 800);
	cr_assert_str_eq(titles__get(t, 706, 900)->backend_type, "client backend");
	titles__stats(t, &st);
	expired = st.expired;
	titles__expire(t, 801);
	titles__stats(t, &st);
	cr_assert_eq(st.expired, expired + 1, "a live-titled process whose exit came first stayed");

	/* An exit title already there stands against a live one after it. */
	titles__exit_title(t, 707, "postgres", idle, sizeof(idle), true, 1000);
	titles__live_title(t, 707, "postgres", "postgres: bob db2 [local] idle",
			   sizeof("postgres: bob db2 [local] idle"), true, 1001);
	pt = titles__get(t, 707, 1100);
	cr_assert_str_eq(pt->user, "alice", "a live title replaced the exit title");
	titles__expire(t, 1001);
	titles__stats(t, &st);
	cr_assert_eq(st.expired, expired + 2, "the exit title's gone mark was lost");
	titles__free(t);
}
