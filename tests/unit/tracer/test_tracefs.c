// SPDX-License-Identifier: BSD-2-Clause
/* Tracepoint record layouts differ between kernels: read them, never assume. */
#include <criterion/criterion.h>
#include <errno.h>

#include "tracer/tracefs.h"

/* task:task_newtask on 6.1 (from a Debian 6.1 guest) and 6.18 (this host). */
static const char newtask_61[] =
	"name: task_newtask\nID: 140\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:pid_t pid;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:char comm[16];\toffset:12;\tsize:16;\tsigned:1;\n"
	"\tfield:unsigned long clone_flags;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:short oom_score_adj;\toffset:40;\tsize:2;\tsigned:1;\n\nprint fmt: ...\n";

static const char fork_618[] =
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:__data_loc char[] parent_comm;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t parent_pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:__data_loc char[] child_comm;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t child_pid;\toffset:20;\tsize:4;\tsigned:1;\n";

Test(tracefs, finds_fields_by_name)
{
	struct tracefs_field f;

	cr_assert_eq(tracefs__parse_field(newtask_61, "pid", &f), 0);
	cr_assert_eq(f.offset, 8);
	cr_assert_eq(f.size, 4);
	cr_assert_eq(tracefs__parse_field(newtask_61, "clone_flags", &f), 0);
	cr_assert_eq(f.offset, 32);
	cr_assert_eq(f.size, 8);
	cr_assert_eq(tracefs__parse_field(newtask_61, "comm", &f), 0);
	cr_assert_eq(f.size, 16);
	cr_assert_eq(tracefs__parse_field(fork_618, "child_pid", &f), 0);
	cr_assert_eq(f.offset, 20);
	cr_assert_eq(tracefs__parse_field(fork_618, "child_comm", &f), 0);
	cr_assert_eq(f.offset, 16);
	/* "pid" is not "common_pid" nor "parent_pid". */
	cr_assert_eq(tracefs__parse_field(fork_618, "pid", &f), -ENOENT);
	cr_assert_eq(tracefs__parse_field(newtask_61, "group_dead", &f), -ENOENT);
	cr_assert_eq(tracefs__parse_field("field:int x;\toffset:-4;\tsize:4;\n", "x", &f), -EINVAL);
}
