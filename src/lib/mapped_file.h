/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mapped_file: open the file a process has mapped, as that process sees
 * it, safely.  The daemon runs as root and the paths come from processes
 * any local user controls, so:
 *  - the exact mapped file first (/proc/PID/map_files/START-END: needs
 *    CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE), then the path inside the
 *    process's root (/proc/PID/root/PATH: containers, PrivateTmp), then
 *    the path in our own namespace;
 *  - never blocking (O_NONBLOCK: a FIFO planted at the path must not hang
 *    the daemon), only regular files, and only the file whose device and
 *    inode the maps line names.  map_files is trusted without that check:
 *    it is the mapping's own file, and overlayfs reports another inode for
 *    the path than for the mapping on some kernels.
 */
#ifndef PROFD_LIB_MAPPED_FILE_H
#define PROFD_LIB_MAPPED_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mapped_file {
	int pid;		/* 0: no process, just path */
	uint64_t start, end;	/* the mapping, for map_files */
	const char *path;	/* as /proc/PID/maps shows it */
	uint64_t dev, ino;	/* as /proc/PID/maps shows them; 0/0: don't check */
};

/* An O_RDONLY|O_CLOEXEC fd of a regular file, or negative errno
 * (-ESTALE: the path names another file now).  The path "[vdso]" gives a
 * memfd holding our own vDSO's image: every 64-bit process on this kernel
 * maps the same one, and none has a file to open. */
int mapped_file__open(const struct mapped_file *mf);

/* Open any path the same careful way: regular files only, never blocking. */
int mapped_file__open_path(const char *path);

/*
 * Whether only root can change fd's file: a regular file owned by uid 0,
 * writable by neither group nor others, and not on FUSE (whose server, a
 * user's program, says who owns what).  Such a file may be mapped rather
 * than read into memory: no other user can truncate it under the mapping
 * (SIGBUS).
 */
struct stat;

bool mapped_file__root_only(int fd);
/* The part of that check a stat() answers: a regular file of root's that
 * no one else may write (the filesystem is the caller's to know). */
bool mapped_file__root_owned(const struct stat *st);

/*
 * Look up files as another user would: the calling thread's filesystem ids
 * become uid/gid until mapped_file__restore(), which also drops root's
 * override of permissions while they last (capabilities(7)).  Per thread.
 * A process that is not root cannot switch, and goes on as itself.
 * restore keeps errno, so the lookup's error survives it.
 */
struct mapped_file_ids {
	unsigned uid, gid;
};
/*
 * The length of the mapping of file (dev, ino) that starts at p at file
 * offset 0 in this process (a library's whole-file mapping of it, e.g.
 * libelf's), or 0 when p starts no such mapping (the library read the file
 * into memory instead).  One read of /proc/self/maps: call it once per map.
 */
size_t mapped_file__own_map(const void *p, uint64_t dev, uint64_t ino);

struct mapped_file_ids mapped_file__become(unsigned uid, unsigned gid);
void mapped_file__restore(struct mapped_file_ids was);

#endif
