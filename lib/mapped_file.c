// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/mapped_file.h"

/* fd of path if it is a regular file (and, if dev or ino, that one). */
static int open_checked(const char *path, uint64_t dev, uint64_t ino, int *fd_out)
{
	struct stat st;
	int fd, flags;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC;
	}
	if ((dev || ino) && ((uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino)) {
		close(fd);
		return -ESTALE;
	}
	/* Regular files ignore O_NONBLOCK for reads, but say what we mean. */
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	*fd_out = fd;
	return 0;
}

int mapped_file__open_path(const char *path)
{
	int fd, err = open_checked(path, 0, 0, &fd);

	return err ? err : fd;
}

int mapped_file__open(const struct mapped_file *mf)
{
	char path[4200];
	int fd, err = -ENOENT, err2;

	if (mf->pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, mf->pid,
			 mf->start, mf->end);
		if (mf->end > mf->start && open_checked(path, 0, 0, &fd) == 0)
			return fd;
		if (mf->path[0] == '/' &&
		    snprintf(path, sizeof(path), "/proc/%d/root%s", mf->pid, mf->path) <
			    (int)sizeof(path)) {
			err = open_checked(path, mf->dev, mf->ino, &fd);
			if (!err)
				return fd;
		}
	}
	/* The process may be gone: its file may still be at the same path here. */
	err2 = open_checked(mf->path, mf->dev, mf->ino, &fd);
	if (!err2)
		return fd;
	/* The more telling of the two errors: "not found" says least. */
	return err2 != -ENOENT || err == -ENOENT ? err2 : err;
}
