// SPDX-License-Identifier: BSD-2-Clause
/* Label lists as ?labels=, "labels" and --labels give them, and split=. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "profile/labels.h"

Test(labels, parse)
{
	static const struct {
		const char *list;
		unsigned want;
	} cases[] = {
		{"", 0},
		{"pid", LABEL_PID},
		{"pid,tid", LABEL_PID | LABEL_TID},
		{"default", LABEL_PROCESS_NAME | LABEL_BACKEND_TYPE | LABEL_DATABASE | LABEL_USER},
		{"default,pid,tid", LABELS_DEFAULT | LABEL_PID | LABEL_TID},
		{"backend_type,backend_type", LABEL_BACKEND_TYPE},
		{"all", LABELS_ALL},
		{"thread_name,user,database", LABEL_THREAD_NAME | LABEL_USER | LABEL_DATABASE},
	};
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned got = 0xdead;

		cr_assert_eq(labels__parse(cases[i].list, &got, err, sizeof(err)), 0, "%s: %s",
			     cases[i].list, err);
		cr_assert_eq(got, cases[i].want, "%s: %#x", cases[i].list, got);
	}
	cr_assert_eq(LABELS_DEFAULT & (LABEL_PID | LABEL_TID | LABEL_THREAD_NAME), 0,
		     "the default must not make a label set per process");
}

Test(labels, parse_errors)
{
	static const char *bad[] = {"bogus", "pid,", ",pid", "pid,,tid", "PID", "pid tid",
				    "backend type", "pid,\x01\xff"};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned got = 7;

		cr_assert_eq(labels__parse(bad[i], &got, err, sizeof(err)), -EINVAL, "%s", bad[i]);
		cr_assert_eq(got, 7, "%s: the result changed on failure", bad[i]);
		cr_assert(strstr(err, "labels: "), "%s", err);
		for (const char *p = err; *p; p++)
			cr_assert(*p >= 0x20 && *p < 0x7f, "unprintable error for %s", bad[i]);
	}
	labels__parse("pid,bogus", &(unsigned){0}, err, sizeof(err));
	cr_assert(strstr(err, "unknown label \"bogus\""), "%s", err);
}

Test(labels, format)
{
	char buf[LABELS_LIST_MAX];

	labels__format(LABELS_DEFAULT, buf);
	cr_assert_str_eq(buf, "process_name,backend_type,database,user");
	labels__format(LABELS_ALL, buf);
	cr_assert_str_eq(buf, "pid,tid,thread_name,process_name,backend_type,database,user");
	cr_assert_lt(strlen(buf), LABELS_LIST_MAX);
	labels__format(0, buf);
	cr_assert_str_eq(buf, "");
}

Test(labels, split)
{
	const char *root = NULL;
	unsigned bit = 0;
	char err[256];

	cr_assert_eq(labels__split("backend_type", &root, &bit, err, sizeof(err)), 0);
	cr_assert_str_eq(root, "backend_type");
	cr_assert_eq(bit, LABEL_BACKEND_TYPE);
	cr_assert_eq(labels__split("none", &root, &bit, err, sizeof(err)), 0);
	cr_assert_str_eq(root, "");
	cr_assert_eq(bit, 0);
	cr_assert_eq(labels__split("process_name", &root, &bit, err, sizeof(err)), 0);
	cr_assert_eq(bit, LABEL_PROCESS_NAME);
	/* Off-CPU and wall profiles carry it without being asked. */
	cr_assert_eq(labels__split("wait_event", &root, &bit, err, sizeof(err)), 0);
	cr_assert_str_eq(root, "wait_event");
	cr_assert_eq(bit, 0);
	/* Numeric labels and shorthands are no root level. */
	cr_assert_eq(labels__split("pid", &root, &bit, err, sizeof(err)), -EINVAL);
	cr_assert_eq(labels__split("default", &root, &bit, err, sizeof(err)), -EINVAL);
	cr_assert_eq(labels__split("", &root, &bit, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "split must be"), "%s", err);
}
