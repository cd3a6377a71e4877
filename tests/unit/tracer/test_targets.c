// SPDX-License-Identifier: BSD-2-Clause
/* targets: lists, descriptions (the heap overflow of issue 11), matching. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "proc/procs.h"
#include "tracer/targets.h"

Test(targets, describe_any_number_of_large_pids)
{
	struct targets t = {};
	struct strbuf sb = {};
	char *s;

	/* 256 copies of a 7-digit pid: 13 bytes each with ", pid ". */
	for (int i = 0; i < 256; i++)
		cr_assert_eq(targets__add_pid(&t, 4194303), 0);
	cr_assert_eq(targets__add_exe(&t, "postgres"), 0);
	cr_assert_eq(targets__describe(&t, &sb), 0);
	s = strbuf__detach(&sb, NULL);
	cr_assert_eq(strlen(s), strlen("pid 4194303") + 255 * strlen(", pid 4194303") +
				       strlen(", exe postgres"));
	cr_assert(!strncmp(s, "pid 4194303, pid 4194303", 24));
	free(s);
	targets__free(&t);
	targets__describe(&t, &sb);
	cr_assert_str_eq(sb.buf, "whole system");
	strbuf__free(&sb);
}

Test(targets, pid_arguments_are_strict)
{
	struct targets t = {};
	static const char *const bad[] = {"0", "-1", " 5", "+5", "5x", "", "99999999999"};

	cr_assert_eq(targets__add_pid_arg(&t, "12"), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_neq(targets__add_pid_arg(&t, bad[i]), 0, "'%s' accepted", bad[i]);
	cr_assert_neq(targets__add_exe(&t, ""), 0);
	cr_assert_eq(t.npids, 1);
	targets__free(&t);
}

Test(targets, copy_is_deep)
{
	struct targets a = {}, b;

	targets__add_pid(&a, 3);
	targets__add_exe(&a, "/usr/bin/x");
	cr_assert_eq(targets__copy(&b, &a), 0);
	targets__free(&a);
	cr_assert_eq(b.pids[0], 3);
	cr_assert_str_eq(b.exes[0], "/usr/bin/x");
	targets__free(&b);
}

Test(targets, executables_match_by_name_or_identity)
{
	struct targets t = {};
	struct stat st;
	struct proc_exe sh = {.name = "sh", .path = "/usr/bin/sh"};

	cr_assert_eq(stat("/bin/sh", &st), 0);
	targets__add_exe(&t, "postgres");
	cr_assert(!targets__match_exe(&t, &sh));
	cr_assert(targets__match_exe(&t, &(struct proc_exe){.name = "postgres"}));
	cr_assert(!targets__match_exe(&t, &(struct proc_exe){.name = "postgres2"}));
	/* A path matches by device and inode, as taken when applied: renames
	 * and hard links are the same binary; a same-named other file isn't. */
	targets__add_exe(&t, "/bin/sh");
	t.exe_ids = calloc(2, sizeof(*t.exe_ids));
	t.exe_ids[1] = (struct targets_exe_id){st.st_dev, st.st_ino, true};
	sh.dev = st.st_dev;
	sh.ino = st.st_ino;
	cr_assert(targets__match_exe(&t, &sh));
	sh.ino++;
	cr_assert(!targets__match_exe(&t, &sh));
	targets__free(&t);
}

/* A reaped child's pid: gone (pids are not reused within a few calls). */
static int gone_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	cr_assert_gt(pid, 0);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	return pid;
}

Test(targets, defaults_drop_gone_pids_and_never_widen)
{
	struct targets t = {.defaults = true}, c;
	struct strbuf sb = {};
	char errbuf[256] = "";
	int dead = gone_pid();

	targets__add_pid(&t, getpid());
	targets__add_pid(&t, dead);
	cr_assert_eq(targets__drop_gone(&t, errbuf, sizeof(errbuf)), 0);
	cr_assert_eq(t.npids, 1);
	cr_assert_eq(t.pids[0], getpid());
	cr_assert(t.dropped);
	cr_assert(!targets__whole_system(&t));
	/* The last one gone: an error naming it, and still not the whole system. */
	t.pids[0] = dead;
	cr_assert_eq(targets__drop_gone(&t, errbuf, sizeof(errbuf)), -ESRCH);
	cr_assert_eq(t.npids, 0);
	cr_assert(strstr(errbuf, "every default target is gone"), "%s", errbuf);
	cr_assert(!targets__whole_system(&t));
	/* A copy (what a session applies) keeps that. */
	cr_assert_eq(targets__copy(&c, &t), 0);
	cr_assert(!targets__whole_system(&c));
	targets__describe(&c, &sb);
	cr_assert(strstr(sb.buf, "none"), "%s", sb.buf);
	strbuf__free(&sb);
	targets__free(&c);
	/* Again, with nothing left to drop: still an error, still not widened. */
	cr_assert_eq(targets__drop_gone(&t, errbuf, sizeof(errbuf)), -ESRCH);
	targets__free(&t);
	/* No pids at all was never a drop: the whole system, no error. */
	t.defaults = true;
	cr_assert_eq(targets__drop_gone(&t, errbuf, sizeof(errbuf)), 0);
	cr_assert(targets__whole_system(&t));
}

Test(targets, a_default_path_not_there_yet_is_waited_for)
{
	struct targets t = {.defaults = true}, client = {.from_client = true}, cli = {};
	char errbuf[256] = "";
	const char *path = "/nonexistent/profd/later";

	/* The daemon's default: no error; a process running it matches by path. */
	targets__add_exe(&t, path);
	cr_assert_eq(targets__check(&t, errbuf, sizeof(errbuf)), 0, "%s", errbuf);
	cr_assert(!t.exe_ids[0].ok);
	cr_assert(targets__match_exe(&t, &(struct proc_exe){.name = "later", .path = path}));
	cr_assert(!targets__match_exe(&t, &(struct proc_exe){.name = "later", .path = "/x/later"}));
	/* A request's target, or record's, must exist. */
	targets__add_exe(&client, path);
	cr_assert_eq(targets__check(&client, errbuf, sizeof(errbuf)), -ENOENT);
	targets__add_exe(&cli, path);
	cr_assert_eq(targets__check(&cli, errbuf, sizeof(errbuf)), -ENOENT);
	cr_assert(!targets__match_exe(&cli, &(struct proc_exe){.name = "later", .path = path}));
	targets__free(&t);
	targets__free(&client);
	targets__free(&cli);
}
