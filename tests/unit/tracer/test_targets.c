// SPDX-License-Identifier: BSD-2-Clause
/* targets: lists, descriptions (the heap overflow of issue 11), matching. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
