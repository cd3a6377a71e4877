/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scratch: a debug file's copy on disk, its compressed sections inflated,
 * for libdw to map.
 *
 * libdw (elfutils 0.188) inflates every compressed .debug_* section of a
 * file into the heap when it opens it, and keeps them until the file is
 * closed: Debian's libc6-dbg file for libc.so.6 is 4 MB on disk and 10 MB
 * inflated, of which a profile reads a few hundred KB.  Inflated once into
 * an unlinked file on a disk and mapped, those bytes are page cache: the
 * pages a lookup touches are resident, the rest are never read in, and the
 * kernel may drop any of them under pressure, which it cannot do with heap
 * on a VM without swap.
 */
#ifndef PROFD_SYM_SCRATCH_H
#define PROFD_SYM_SCRATCH_H

#include <stdbool.h>
#include <stdint.h>

/* Where the copies go by default: disk, kept across reboots, cleaned by
 * the system (FHS), and private and writable under systemd's PrivateTmp. */
#define SCRATCH_DIR_DEFAULT "/var/tmp"

/* scratch__copy's flags. */
#define SCRATCH_INFLATE 1u	/* inflate zlib sections (else copy them as they are) */
#define SCRATCH_ALWAYS 2u	/* copy even when there is nothing to inflate */

/*
 * A new O_CLOEXEC fd of an unlinked file (O_TMPFILE, mode 0600, never
 * named, so no one else can open or change it) in dir, holding the ELF
 * file at fd with, under SCRATCH_INFLATE, every zlib section
 * (SHF_COMPRESSED, ELFCOMPRESS_ZLIB, not SHF_ALLOC: as libelf inflates)
 * inflated, and everything else copied byte for byte.  fd is only read,
 * with pread: it may be anyone's file, and one that shrinks meanwhile is
 * an error, not a SIGBUS.  Every byte of it is read once at most (sections
 * may not overlap), so the work is bounded by its size and the copy's.
 * The copy is at most max bytes, and half the disk's free space.  fd
 * stays the caller's.  The copy is a copy: checks made on fd's contents
 * (its string tables, its build ID) are the caller's to make again on it.
 *
 * Negative errno, and nothing left behind, when:
 *  -ENODATA	nothing to inflate and no SCRATCH_ALWAYS (use fd as it is);
 *  -EXDEV	dir is in memory (tmpfs, ramfs): a copy there saves nothing;
 *  -EPERM	dir is not root's, or is on FUSE;
 *  -EFBIG	over max, or over half the free space;
 *  -ENOEXEC	not an ELF file of this machine's byte order, or malformed
 *		(sections outside the file or sharing bytes, an alignment
 *		over 4 KiB, a stream that inflates to other than its header
 *		says, or more than 1032 times its size, or that has bytes
 *		after its end);
 *  anything open(2), pread(2) or write(2) returns (-EOPNOTSUPP: a
 *  filesystem without O_TMPFILE; -EROFS, -EACCES: dir not writable).
 */
int scratch__copy(int fd, const char *dir, uint64_t max, unsigned int flags);

#endif
