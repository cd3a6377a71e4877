// SPDX-License-Identifier: BSD-2-Clause
/* tracefs: tracepoint record layouts, read from tracefs (the contract: tracefs.h). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer/tracefs.h"

static bool has_events(const char *dir)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/events", dir);
	return access(path, R_OK | X_OK) == 0;
}

const char *tracefs__dir(void)
{
	static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (has_events(dirs[i]))
			return dirs[i];
	/* systemd mounts it on every boot; a bare system may not have. */
	if (mount("tracefs", dirs[0], "tracefs", 0, NULL) == 0 && has_events(dirs[0]))
		return dirs[0];
	if (!errno)
		errno = ENOENT;
	return NULL;
}

/*
 * Lines look like
 *	field:pid_t child_pid;	offset:44;	size:4;	signed:1;
 *	field:__data_loc char[] filename;	offset:8;	size:4;	signed:0;
 * and the field's name is the last word before ';' (or before '[').
 */
int tracefs__parse_field(const char *format, const char *name, struct tracefs_field *out)
{
	size_t nlen = strlen(name);
	const char *line = format;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		const char *f = strstr(line, "field:");
		const char *semi, *start, *end;
		int off, size;

		if (!f || (nl && f > nl))
			goto next;
		semi = strchr(f, ';');
		if (!semi || (nl && semi > nl))
			goto next;
		/* The name is the last word; an array's "[16]" follows it, a
		 * __data_loc's "char[]" is in the type before it. */
		start = semi;
		while (start > f && start[-1] != ' ' && start[-1] != '*' && start[-1] != ':')
			start--;
		end = memchr(start, '[', semi - start) ?: semi;
		if ((size_t)(end - start) != nlen || memcmp(start, name, nlen))
			goto next;
		if (sscanf(semi + 1, " offset:%d; size:%d;", &off, &size) != 2 || off < 0 ||
		    size <= 0 || off > 4096)
			return -EINVAL;
		out->offset = off;
		out->size = size;
		return 0;
next:
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

int tracefs__read_event(const char *category, const char *event, const char *file, char *buf,
			size_t len)
{
	const char *dir = tracefs__dir();
	char path[256];
	ssize_t n;
	int fd;

	if (!dir)
		return -errno;
	snprintf(path, sizeof(path), "%s/events/%s/%s/%s", dir, category, event, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return 0;
}

int tracefs__field(const char *category, const char *event, const char *name,
		   struct tracefs_field *out)
{
	char buf[8192];
	int err = tracefs__read_event(category, event, "format", buf, sizeof(buf));

	return err ? err : tracefs__parse_field(buf, name, out);
}
