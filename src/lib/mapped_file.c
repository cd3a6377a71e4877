// SPDX-License-Identifier: BSD-2-Clause
/* mapped_file: opening a process's files safely (the contract: mapped_file.h). */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
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

/* FUSE's: a user's own file server may say a file is root's, and shrink it. */
#define FUSE_MAGIC 0x65735546

bool mapped_file__root_owned(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

bool mapped_file__root_only(int fd)
{
	struct statfs sfs;
	struct stat st;

	return fstat(fd, &st) == 0 && mapped_file__root_owned(&st) && fstatfs(fd, &sfs) == 0 &&
	       sfs.f_type != FUSE_MAGIC;
}

size_t mapped_file__own_map(const void *p, uint64_t dev, uint64_t ino)
{
	unsigned long long lo, hi, off, inode;
	unsigned maj, mnr;
	size_t len = 0;
	char line[512];
	FILE *f;

	if (!p)
		return 0;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *end;

		/* Sorted by address: only the line that starts at p is parsed
		 * whole.  A path longer than the buffer continues on the next
		 * read: that piece does not parse as a mapping's line. */
		lo = strtoull(line, &end, 16);
		if (*end != '-' || lo < (uintptr_t)p)
			continue;
		if (lo == (uintptr_t)p &&
		    sscanf(line, "%llx-%llx %*4s %llx %x:%x %llu", &lo, &hi, &off, &maj, &mnr,
			   &inode) == 6 && !off && inode == ino && makedev(maj, mnr) == dev && hi > lo)
			len = hi - lo;
		break;
	}
	fclose(f);
	return len;
}

struct mapped_file_ids mapped_file__become(unsigned uid, unsigned gid)
{
	struct mapped_file_ids was;

	/* Each returns the previous id, whether it switched or not. */
	was.uid = (unsigned)setfsuid(uid);
	was.gid = (unsigned)setfsgid(gid);
	return was;
}

void mapped_file__restore(struct mapped_file_ids was)
{
	int err = errno;

	setfsgid(was.gid);
	setfsuid(was.uid);
	errno = err;
}

/* The image's extent: its program and section headers say where it ends. */
static size_t vdso_size(const Elf64_Ehdr *eh)
{
	const Elf64_Phdr *ph = (const void *)((const char *)eh + eh->e_phoff);
	size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;

	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	return size;
}

static int vdso_open(void)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	size_t size, done = 0;
	int fd;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOENT;
	size = vdso_size(eh);
	if (size > (1u << 20))
		return -EFBIG;
	fd = memfd_create("profd-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (done < size) {
		ssize_t n = write(fd, (const char *)eh + done, size - done);

		if (n <= 0) {
			close(fd);
			return -EIO;
		}
		done += n;
	}
	return fd;
}

int mapped_file__open(const struct mapped_file *mf)
{
	char path[4200];
	int fd, err = -ENOENT, err2;

	if (!strcmp(mf->path, "[vdso]"))
		return vdso_open();
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
