// SPDX-License-Identifier: BSD-2-Clause
/*
 * pgexe: whether a process runs a root-installed postgres binary (the
 * contract: pgexe.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/mapped_file.h"
#include "proc/pgexe.h"
#include "proc/procstat.h"

bool pgexe__is_postgres(const char *proc_root, int pid)
{
	return pgexe__check(proc_root, pid, NULL);
}

bool pgexe__runs_known(const char *proc_root, int pid, const struct pgexe_id *known, size_t n)
{
	char path[PATH_MAX];
	struct stat st;

	if (pid <= 0 || !n ||
	    snprintf(path, sizeof(path), "%s/%d/exe", proc_root, pid) >= (int)sizeof(path) ||
	    stat(path, &st) || !mapped_file__root_owned(&st))
		return false;
	for (size_t i = 0; i < n; i++)
		if (known[i].dev == (uint64_t)st.st_dev && known[i].ino == (uint64_t)st.st_ino)
			return true;
	return false;
}

bool pgexe__check(const char *proc_root, int pid, struct pgexe_id *id)
{
	char path[PATH_MAX], target[PATH_MAX];
	struct stat st;
	const char *base;
	ssize_t n;
	size_t len;
	bool ok;
	int fd;

	if (pid <= 0 || snprintf(path, sizeof(path), "%s/%d/exe", proc_root, pid) >=
				(int)sizeof(path))
		return false;
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	/* A binary replaced since it started (a package upgrade) is still it. */
	len = (size_t)n;
	if (len > 10 && !strcmp(target + len - 10, " (deleted)"))
		target[len - 10] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strcmp(base, "postgres") && strcmp(base, "postmaster"))
		return false;
	/* The running file itself, not whatever the path names now. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	ok = mapped_file__root_only(fd);
	if (ok && id) {
		ok = fstat(fd, &st) == 0;
		if (ok)
			*id = (struct pgexe_id){st.st_dev, st.st_ino};
	}
	close(fd);
	return ok;
}

/* PROC_ROOT/PID/stat's comm: a postgres name?  And its parent, into ppid. */
static bool pg_comm(const char *proc_root, int pid, int *ppid)
{
	struct procstat ps;

	if (procstat__read(proc_root, pid, &ps))
		return false;
	*ppid = ps.ppid;
	return !strcmp(ps.comm, "postgres") || !strcmp(ps.comm, "postmaster");
}

int pgexe__postmasters(const char *proc_root, int *pids, size_t max)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(proc_root);
	int pid, ppid, pppid;
	char *end;

	if (!d)
		return -errno;
	while (n < max && (de = readdir(d))) {
		long v = strtol(de->d_name, &end, 10);

		if (*end || v <= 0 || v > INT32_MAX)
			continue;
		pid = (int)v;
		/* A backend's parent is the postmaster; the postmaster's is
		 * init, pg_ctl, systemd or a shell. */
		if (pg_comm(proc_root, pid, &ppid) && !(ppid > 0 && pg_comm(proc_root, ppid, &pppid)) &&
		    pgexe__is_postgres(proc_root, pid))
			pids[n++] = pid;
	}
	closedir(d);
	return (int)n;
}
