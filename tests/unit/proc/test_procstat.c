// SPDX-License-Identifier: BSD-2-Clause
/* procstat: stat lines as the kernel writes them, and as a hostile comm
 * makes them look. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc/procstat.h"

/* A real line (a postgres backend on 6.18), fields 1 to 52. */
#define REST " S 812 812 812 0 -1 4194560 231 0 0 0 0 0 0 0 20 0 1 0 6174 226189312 " \
	     "3334 18446744073709551615 94618838515712 94618844508469 140736512212560 0 0 0 " \
	     "0 20975616 536904295 0 0 0 17 1 0 0 0 0 0 94618846744944 94618846952808 " \
	     "94618861477888 140736512218537 140736512218586 140736512218586 " \
	     "140736512221158 0\n"

Test(procstat, real_line)
{
	struct procstat ps;

	cr_assert_eq(procstat__parse("4242 (postgres)" REST, &ps), 0);
	cr_assert_str_eq(ps.comm, "postgres");
	cr_assert_eq(ps.state, 'S');
	cr_assert_eq(ps.ppid, 812);
	cr_assert_eq(ps.flags, 4194560);
	cr_assert(!(ps.flags & PROCSTAT_PF_EXITING));
	cr_assert_eq(ps.starttime, 6174);
	cr_assert_eq(ps.arg_start, 140736512218537ull);
}

/* A zombie: state Z, and PF_EXITING in its flags since its exit. */
Test(procstat, zombie)
{
	struct procstat ps;

	cr_assert_eq(procstat__parse("4243 (postgres) Z 812 812 812 0 -1 4228164 231 0 0 0 0 0 "
				     "0 0 20 0 1 0 6180 0 0 18446744073709551615\n", &ps), 0);
	cr_assert_eq(ps.state, 'Z');
	cr_assert(ps.flags & PROCSTAT_PF_EXITING);
	cr_assert_eq(ps.starttime, 6180);
}

/* The comm is the process's own choice: what looks like fields in it must
 * not shift the real ones. */
Test(procstat, hostile_comm)
{
	static const struct {
		const char *line;
		const char *comm;
	} cases[] = {
		{"7 (a) S 1 2 3 (b)" REST, "a) S 1 2 3 (b"},
		{"7 ()))" REST, "))"},
		{"7 ( )" REST, " "},
		{"7 (x\ny)" REST, "x\ny"},
		{"7 ((postgres)" REST, "(postgres"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct procstat ps;

		cr_assert_eq(procstat__parse(cases[i].line, &ps), 0, "case %zu", i);
		cr_assert_str_eq(ps.comm, cases[i].comm, "case %zu", i);
		cr_assert_eq(ps.ppid, 812, "case %zu: ppid %d", i, ps.ppid);
		cr_assert_eq(ps.arg_start, 140736512218537ull, "case %zu", i);
	}
}

Test(procstat, long_comm_cut)
{
	char line[512];
	struct procstat ps;

	snprintf(line, sizeof(line), "9 (%0100d)" REST, 0);
	cr_assert_eq(procstat__parse(line, &ps), 0);
	cr_assert_eq(strlen(ps.comm), PROCSTAT_COMM_MAX - 1);
	cr_assert_eq(ps.ppid, 812);
}

Test(procstat, not_a_stat_line)
{
	struct procstat ps;

	cr_assert_eq(procstat__parse("", &ps), -EINVAL);
	cr_assert_eq(procstat__parse("7 postgres S 1", &ps), -EINVAL, "no parentheses");
	cr_assert_eq(procstat__parse("7 )x( S 1", &ps), -EINVAL, "')' before '('");
	cr_assert_eq(procstat__parse("7 (x) S", &ps), -EINVAL, "no parent");
	cr_assert_eq(procstat__parse("7 (x) S -4", &ps), -EINVAL, "a negative parent");
	cr_assert_eq(procstat__parse("7 (x) S 99999999999", &ps), -EINVAL, "a parent past int");
	cr_assert_eq(procstat__parse("7 (x) S 1z", &ps), -EINVAL);
	/* An old kernel's line ends before arg_start: that field stays 0. */
	cr_assert_eq(procstat__parse("7 (x) S 1 2 3\n", &ps), 0);
	cr_assert_eq(ps.ppid, 1);
	cr_assert_eq(ps.arg_start, 0);
}

/* Its own line: under qemu-user (the arm64 unit tests) that one is
 * qemu's rendering, 44 fields and no arg_start; its parent's is the
 * kernel's (pid 1's may have none: a VM's or a container's init). */
Test(procstat, read_self_and_gone)
{
	struct procstat ps;

	cr_assert_eq(procstat__read("/proc", getpid(), &ps), 0);
	cr_assert_eq(ps.ppid, getppid());
	cr_assert_neq(ps.starttime, 0);
	cr_assert_eq(procstat__read("/proc", getppid(), &ps), 0);
	if (geteuid() == 0)
		cr_assert_neq(ps.arg_start, 0, "root reads another process's arg_start");
	cr_assert_eq(procstat__read("/proc", 0, &ps), -EINVAL);
	cr_assert_eq(procstat__read("/nonexistent", 1, &ps), -ENOENT);
}
