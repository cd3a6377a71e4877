// SPDX-License-Identifier: BSD-2-Clause
/* labels: which labels a profile carries: ?labels=, "labels", --labels (the contract: labels.h). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "profile/labels.h"

static const struct {
	const char *name;
	unsigned mask;
} names[] = {
	{"pid", LABEL_PID},
	{"tid", LABEL_TID},
	{"thread_name", LABEL_THREAD_NAME},
	{"process_name", LABEL_PROCESS_NAME},
	{"backend_type", LABEL_BACKEND_TYPE},
	{"database", LABEL_DATABASE},
	{"user", LABEL_USER},
	{"default", LABELS_DEFAULT},
	{"all", LABELS_ALL},
};

#define NNAMES (sizeof(names) / sizeof(names[0]))
#define KNOWN "pid, tid, thread_name, process_name, backend_type, database, user, default, all"

/* Safe to echo back in an error: a short word of [a-z0-9_]. */
static bool printable_word(const char *s, size_t len)
{
	if (len > 32)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_-.", s[i]))
			return false;
	return true;
}

int labels__parse(const char *list, unsigned *out, char *errbuf, size_t errlen)
{
	unsigned mask = 0;
	const char *p = list;

	if (!list || !*list) {
		*out = 0;
		return 0;
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		size_t i;

		for (i = 0; i < NNAMES; i++)
			if (strlen(names[i].name) == len && !strncmp(p, names[i].name, len))
				break;
		if (i == NNAMES) {
			if (!len)
				snprintf(errbuf, errlen, "labels: empty name in the list");
			else if (printable_word(p, len))
				snprintf(errbuf, errlen, "labels: unknown label \"%.*s\"; known: %s",
					 (int)len, p, KNOWN);
			else
				snprintf(errbuf, errlen, "labels: unknown label; known: %s", KNOWN);
			return -EINVAL;
		}
		mask |= names[i].mask;
		if (!p[len])
			break;
		p += len + 1;
	}
	*out = mask;
	return 0;
}

int labels__split(const char *name, const char **root, unsigned *bit, char *errbuf,
		  size_t errlen)
{
	static const unsigned strs = LABEL_THREAD_NAME | LABEL_PROCESS_NAME | LABELS_TITLE;

	if (!strcmp(name, "none")) {
		*root = "";
		*bit = 0;
		return 0;
	}
	/* No bit to ask for: off-CPU and wall profiles label every stack a
	 * postgres backend waited in, wall profiles every stack with its state
	 * (stackprof), and other stacks fall back to their process's name
	 * (render's root_label). */
	if (!strcmp(name, "wait_event") || !strcmp(name, "state")) {
		*root = !strcmp(name, "state") ? "state" : "wait_event";
		*bit = 0;
		return 0;
	}
	for (size_t i = 0; i < NNAMES; i++) {
		if (!(names[i].mask & strs) || (names[i].mask & (names[i].mask - 1)) ||
		    strcmp(name, names[i].name))
			continue;
		*root = names[i].name;
		*bit = names[i].mask;
		return 0;
	}
	snprintf(errbuf, errlen, "split must be process_name, thread_name, backend_type, "
		 "database, user, wait_event, state or none");
	return -EINVAL;
}

void labels__format(unsigned mask, char buf[LABELS_LIST_MAX])
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NNAMES; i++) {
		/* Single labels only: "default" and "all" are shorthands. */
		if (!(mask & names[i].mask) || (names[i].mask & (names[i].mask - 1)))
			continue;
		n += snprintf(buf + n, LABELS_LIST_MAX - n, "%s%s", n ? "," : "", names[i].name);
	}
}

void labels__names(unsigned mask, const char **out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < NNAMES && n + 1 < cap; i++) {
		if ((mask & names[i].mask) && !(names[i].mask & (names[i].mask - 1)))
			out[n++] = names[i].name;
	}
	if (cap)
		out[n] = NULL;
}
