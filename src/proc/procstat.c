// SPDX-License-Identifier: BSD-2-Clause
/*
 * procstat: one process's /proc/PID/stat, parsed (the contract: procstat.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/procstat.h"

/* The fields kept, by their number in proc(5). */
enum {
	FIELD_STATE = 3,
	FIELD_PPID = 4,
	FIELD_FLAGS = 9,
	FIELD_STARTTIME = 22,
	FIELD_ARG_START = 48,
};

int procstat__parse(const char *line, struct procstat *out)
{
	const char *open_paren = strchr(line, '('), *p = strrchr(line, ')');
	size_t len;
	int field;

	memset(out, 0, sizeof(*out));
	if (!open_paren || !p || p < open_paren)
		return -EINVAL;
	len = (size_t)(p - open_paren - 1);
	if (len >= sizeof(out->comm))
		len = sizeof(out->comm) - 1;
	memcpy(out->comm, open_paren + 1, len);
	out->comm[len] = '\0';
	p++;
	for (field = FIELD_STATE; field <= FIELD_ARG_START; field++) {
		const char *tok;
		char *end;
		long v;

		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		tok = p;
		while (*p && *p != ' ' && *p != '\n')
			p++;
		switch (field) {
		case FIELD_STATE:
			out->state = *tok;
			break;
		case FIELD_PPID:
			errno = 0;
			v = strtol(tok, &end, 10);
			if (end != p || errno || v < 0 || v > INT_MAX)
				return -EINVAL;
			out->ppid = (int)v;
			break;
		case FIELD_FLAGS:
			out->flags = strtoul(tok, NULL, 10);
			break;
		case FIELD_STARTTIME:
			out->starttime = strtoull(tok, NULL, 10);
			break;
		case FIELD_ARG_START:
			out->arg_start = strtoull(tok, NULL, 10);
			break;
		}
	}
	/* A state and a parent, or it is not a stat line. */
	return field > FIELD_PPID ? 0 : -EINVAL;
}

int procstat__read(const char *proc_root, int pid, struct procstat *out)
{
	/* ~52 fields of at most 20 digits, after a comm of at most 64 bytes. */
	char path[PATH_MAX], line[1280];
	ssize_t n;
	int fd, err;

	memset(out, 0, sizeof(*out));
	if (pid <= 0)
		return -EINVAL;
	if (snprintf(path, sizeof(path), "%s/%d/stat", proc_root, pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, line, sizeof(line) - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	if (n == 0)
		return -ENOENT;
	line[n] = '\0';
	return procstat__parse(line, out);
}
