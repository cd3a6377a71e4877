// SPDX-License-Identifier: BSD-2-Clause
/*
 * Finding an object's debug file, for libdwfl (its find_debuginfo
 * callback): only regular files, never blocking, checked against the
 * object's build ID or debug link CRC.  Local places first, then what
 * debuginfod has fetched (asking it to fetch when it hasn't).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/log.h"
#include "lib/mapped_file.h"
#include "symbolizer/elf.h"
#include "symbolizer/obj.h"
#include "symbolizer/scratch.h"

/* A debug file not owned by root is copied to memory: at most this big. */
#define DEBUG_COPY_MAX (256u << 20)
/* A candidate matched by the debug link's CRC is read whole, in the event
 * loop: anything larger is skipped (a link to a sparse 64 GB file would
 * otherwise hold the daemon for minutes). */
#define DEBUG_CRC_MAX (512u << 20)

/* What an inflated copy may take on disk (and never more than half the free
 * space there, scratch.h): libc6-dbg's largest, libc's, is 10 MB. */
#define DEBUG_INFLATE_MAX (512ull << 20)
/*
 * The DWARF of a debug file another user could change may take this much
 * once inflated, on disk or in memory, as a main file's may (obj.c's
 * OBJ_DWARF_READ_MAX): a small stream can claim, and inflate to, any size
 * (600 MiB of zeros is a 600 KB stream), and libdw inflates every section
 * whole when it opens the file.  Over it the debug file is not used.
 */
#define DEBUG_USER_DWARF_MAX (64ull << 20)
/*
 * What all copies alive at once may take, over every symbolizer: each
 * cached object holds its copy, and a local user can make hundreds of
 * objects with debug files of their own (.gnu_debuglink), each of which
 * half the free space would bound but not their sum: a full disk stops
 * the database.  Past it, debug files stay in memory, where
 * max_memory_mb holds them.  Two threads may both pass the check at once:
 * the sum may go over it by one copy.
 */
#define SCRATCH_TOTAL_MAX (256ull << 20)

/* Bytes of the copies alive (atomic): given back by obj__scratch_release. */
static uint64_t scratch_live;

uint64_t obj__scratch_bytes(void)
{
	return __atomic_load_n(&scratch_live, __ATOMIC_RELAXED);
}

void obj__scratch_release(struct sym_obj *o)
{
	if (o->scratch_bytes)
		__atomic_sub_fetch(&scratch_live, o->scratch_bytes, __ATOMIC_RELAXED);
	o->scratch_bytes = 0;
}

/* obj__set_scratch_dir's: "" is off. */
static char scratch_dir[PATH_MAX] = SCRATCH_DIR_DEFAULT;

void obj__set_scratch_dir(const char *dir)
{
	snprintf(scratch_dir, sizeof(scratch_dir), "%s", dir ? dir : "");
}

const char *obj__scratch_dir(void)
{
	return scratch_dir;
}

/*
 * The fd libdwfl gets for o.  First, a copy on disk with the compressed
 * sections inflated (scratch.h), of any file with such sections and of
 * every file another user could change: libdwfl maps that copy, and no one but us can
 * change it.  Otherwise, a file only root can change
 * (mapped_file__root_only) is used as it is; any other is copied into a
 * memfd, which only we can change.  libdwfl maps debug files, and a
 * mapping reads past a truncation as SIGBUS.
 */
/* What fd's .debug_* sections take inflated, as their headers say. */
static uint64_t dwarf_need(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	uint64_t need = elf ? elf__read_size(elf, fd, ELF_READ_DWARF) : UINT64_MAX;

	if (elf)
		elf_end(elf);
	return need;
}

/* Whether any section of fd is still compressed, for libelf to inflate
 * in its mapping (obj__release_pages must then leave that mapping be). */
static bool has_compressed(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	bool any = !elf || elf__has_compressed(elf);

	if (elf)
		elf_end(elf);
	return any;
}

/*
 * fd's string tables end inside themselves (its symbols are used too: the
 * same checks as the main file's), and its build ID is o's when o has one.
 * A candidate is checked so (debug_matches), and a copy again: its owner
 * may have rewritten the file between that check and the copy, and a
 * string table compressed in the original was not checked at all.
 */
static bool elf_usable(const struct sym_obj *o, int fd)
{
	unsigned char bits[64];
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	bool ok = elf && !elf__check_strtabs(elf);

	if (ok && o->build_id_len)
		ok = elf__read_build_id(elf, bits, sizeof(bits)) == o->build_id_len &&
		     !memcmp(bits, o->build_id_bits, o->build_id_len);
	if (elf)
		elf_end(elf);
	return ok;
}

static int debug_fd(struct sym_obj *o, int fd)
{
	bool root_only = mapped_file__root_only(fd);
	uint64_t live = obj__scratch_bytes(), need;
	struct stat st;
	int mfd;
	off_t off = 0;

	/* The unwinder's objects (!o->symbols) take only the symbol table
	 * from a debug file, never its DWARF: another user's file is copied
	 * for them, not inflated, and root's used as it is. */
	if (scratch_dir[0] && (o->symbols || !root_only) && live < SCRATCH_TOTAL_MAX) {
		uint64_t room = SCRATCH_TOTAL_MAX - live;
		uint64_t max = root_only ? DEBUG_INFLATE_MAX
			       : o->symbols ? DEBUG_USER_DWARF_MAX : DEBUG_COPY_MAX;
		unsigned int flags = (o->symbols ? SCRATCH_INFLATE : 0) |
				     (root_only ? 0 : SCRATCH_ALWAYS);

		mfd = scratch__copy(fd, scratch_dir, room < max ? room : max, flags);
		if (mfd >= 0 && (!elf_usable(o, mfd) || fstat(mfd, &st))) {
			log__warn("%s: its debug file changed while it was copied: not used", o->path);
			close(mfd);
			close(fd);
			return -ENOENT;
		}
		if (mfd >= 0) {
			close(fd);
			o->scratch_bytes += (uint64_t)st.st_size;
			__atomic_add_fetch(&scratch_live, (uint64_t)st.st_size, __ATOMIC_RELAXED);
			o->dbg_compressed = has_compressed(mfd);
			return mfd;
		}
		if (mfd != -ENODATA)
			log__debug("%s: debug file not copied under %s: %s", o->path, scratch_dir,
				   strerror(-mfd));
	}
	if (fstat(fd, &st)) {
		close(fd);
		return -ENOENT;
	}
	o->dbg_compressed = has_compressed(fd);
	if (root_only)
		return fd;
	if ((uint64_t)st.st_size > DEBUG_COPY_MAX) {
		close(fd);
		return -EFBIG;
	}
	/* In memory, libdw would inflate its sections into the heap. */
	need = dwarf_need(fd);
	if (need > DEBUG_USER_DWARF_MAX) {
		log__warn("%s: its debug file's DWARF would take %llu MiB, over %llu: "
			  "symbolized without it", o->path, (unsigned long long)(need >> 20),
			  DEBUG_USER_DWARF_MAX >> 20);
		o->dwarf_refused = true;
		close(fd);
		return -EFBIG;
	}
	mfd = memfd_create("profd-debuginfo", MFD_CLOEXEC);
	if (mfd < 0) {
		close(fd);
		return -errno;
	}
	while (off < st.st_size) {
		ssize_t n = sendfile(mfd, fd, &off, st.st_size - off);

		if (n <= 0)
			break;	/* truncated under us: what was read is what there is */
	}
	close(fd);
	if (!elf_usable(o, mfd)) {
		log__warn("%s: its debug file changed while it was copied: not used", o->path);
		close(mfd);
		return -ENOENT;
	}
	o->dbg_compressed = has_compressed(mfd);
	lseek(mfd, 0, SEEK_SET);
	return mfd;
}

/* Does the candidate at fd belong to o: the same build ID, or the CRC the
 * debug link names when there is no build ID to compare? */
static bool debug_matches(const struct sym_obj *o, int fd, GElf_Word crc)
{
	unsigned char buf[65536];
	uLong sum = crc32(0, NULL, 0);
	ssize_t n;
	off_t off = 0;

	if (o->build_id_len)
		return elf_usable(o, fd);
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		sum = crc32(sum, buf, n);
		off += n;
	}
	return n == 0 && (GElf_Word)sum == crc;
}

/*
 * Open a candidate: path's first root_len bytes are a process's root
 * (/proc/PID/root), and the rest is resolved inside it as the process
 * would, so an absolute symlink in a container cannot lead to the host's
 * files (RESOLVE_IN_ROOT; kernels before 5.6 resolve it as a plain path).
 * Regular files only, never blocking.
 */
static int open_candidate(const char *path, size_t root_len, bool no_symlinks)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char root[64];
	struct stat st;
	int dfd, fd, flags;

	if (no_symlinks && !root_len) {
		/* In our own namespace, a link next to another root's file
		 * must not lead anywhere: resolved as "/" with no symlinks. */
		how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
		dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return -errno;
		fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
		close(dfd);
		if (fd < 0)
			return errno == ENOSYS ? -ENOENT : -errno;
		goto opened;
	}
	if (!root_len || root_len >= sizeof(root))
		return mapped_file__open_path(path);
	memcpy(root, path, root_len);
	root[root_len] = '\0';
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, dfd, path + root_len, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) {
		close(dfd);
		return mapped_file__open_path(path);
	}
	close(dfd);
	if (fd < 0)
		return -errno;
opened:
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

/*
 * A candidate the .gnu_debuglink names beside the file (in its directory
 * or its .debug/), which the file's owner chose: opened with the profiled
 * process's owner's filesystem ids (per thread; root's overrides go while
 * they last), so a link to a file only root may read lends its symbols to
 * no one else's profile.  In our own namespace (the process is gone, or
 * its root is not ours: a chroot's maps show host paths) it may not
 * follow a symlink at all.  The system's debug directories are root's,
 * and opened as root.
 */
static int open_as_owner(const struct sym_obj *o, const char *path, size_t root_len)
{
	struct mapped_file_ids was;
	int fd;

	if (!o->owner_uid && !o->owner_gid)
		return open_candidate(path, root_len, true);
	was = mapped_file__become(o->owner_uid, o->owner_gid);
	fd = open_candidate(path, root_len, true);
	mapped_file__restore(was);
	return fd;
}

/* Try one candidate path; its fd when it is o's debug file.  Sizes are
 * checked before anything is read: the candidate may be anyone's file. */
static int try_debug(struct sym_obj *o, const char *path, size_t root_len, GElf_Word crc,
		     bool beside)
{
	unsigned char ident[SELFMAG];
	uint64_t max = DEBUG_COPY_MAX;
	struct stat st;
	int fd = beside ? open_as_owner(o, path, root_len) : open_candidate(path, root_len, false);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		close(fd);
		return -ENOENT;
	}
	if (mapped_file__root_only(fd))
		max = UINT64_MAX;	/* used as it is, never copied */
	if (!o->build_id_len && max > DEBUG_CRC_MAX)
		max = DEBUG_CRC_MAX;
	if ((uint64_t)st.st_size > max || pread(fd, ident, sizeof(ident), 0) != sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG) || !debug_matches(o, fd, crc)) {
		close(fd);
		return -ENOENT;
	}
	return debug_fd(o, fd);
}

/* The standard places under one root, in the standard order. */
static int find_under(struct sym_obj *o, const char *root, const char *debuglink_file,
		      GElf_Word crc, char *path, size_t size)
{
	char dir[PATH_MAX];
	const char *slash;
	int fd = -ENOENT;

	if (o->build_id_len) {
		int n = snprintf(path, size, "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root,
				 o->build_id, o->build_id + 2);

		if (n > 0 && (size_t)n < size) {
			fd = try_debug(o, path, strlen(root), 0, false);
			if (fd >= 0)
				return fd;
		}
	}
	if (!debuglink_file || strchr(debuglink_file, '/'))
		return -ENOENT;
	slash = strrchr(o->path, '/');
	if (!slash)
		return -ENOENT;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - o->path), o->path);
	const char *const fmts[] = {"%s%s/%s", "%s%s/.debug/%s", "%s/usr/lib/debug%s/%s"};
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		int n = snprintf(path, size, fmts[i], root, dir, debuglink_file);

		if (n <= 0 || (size_t)n >= size)
			continue;
		/* The first two are beside the file; the last, the system's. */
		fd = try_debug(o, path, strlen(root), crc, i < 2);
		if (fd >= 0)
			return fd;
	}
	return fd;
}

/* Remember what debuginfod answered, for obj__debuginfo_arrived(): gen is
 * the generation read before asking, so a fetch that ended in between is
 * noticed next time rather than missed. */
static void note_debuginfod(struct sym_obj *o, int err, uint64_t gen, int64_t retry_ns)
{
	o->dbgd_gen = gen;
	o->dbgd_retry_ns = 0;
	if (err == -EINPROGRESS || err == -EAGAIN) {
		o->dbgd_wait = true;
	} else if (err == -ENOENT) {
		o->dbgd_wait = true;
		o->dbgd_retry_ns = retry_ns ?: 1;
	} else {
		o->dbgd_wait = false;	/* found, off, or an ID it can't take */
	}
}

/*
 * The debug file debuginfod fetched for o, or negative errno when there is
 * none yet (it is fetching it now) or none at all.  The file comes from a
 * server, so it is opened and checked exactly like a local candidate.
 */
static int from_debuginfod(struct sym_obj *o, char *path, size_t size)
{
	uint64_t gen = debuginfod__generation(o->dbgd);
	int64_t retry_ns = 0;
	int err, fd;

	err = debuginfod__request(o->dbgd, o->build_id, path, size, &retry_ns);
	if (!err) {
		fd = try_debug(o, path, 0, 0, false);
		if (fd >= 0) {
			note_debuginfod(o, 0, gen, 0);
			return fd;
		}
		/* Cleaned out of the cache, or not o's after all. */
		debuginfod__reject(o->dbgd, o->build_id);
		err = debuginfod__request(o->dbgd, o->build_id, path, size, &retry_ns);
	}
	note_debuginfod(o, err, gen, retry_ns);
	return err ?: -ENOENT;
}

bool obj__debuginfo_arrived(struct sym_obj *o, int64_t now_ns)
{
	char path[PATH_MAX + 256];
	int64_t retry_ns = 0;
	uint64_t gen;
	int err;

	if (!o->dbgd_wait)
		return false;
	gen = debuginfod__generation(o->dbgd);
	if (o->dbgd_retry_ns ? now_ns < o->dbgd_retry_ns : gen == o->dbgd_gen)
		return false;
	err = debuginfod__request(o->dbgd, o->build_id, path, sizeof(path), &retry_ns);
	if (!err)
		return true;	/* opened again, find_debuginfo takes it */
	note_debuginfod(o, err, gen, retry_ns);
	return false;
}

/*
 * libdwfl's find_debuginfo: /usr/lib/debug/.build-id/xx/yyyy.debug, then
 * the .gnu_debuglink name next to the file, in its .debug/, and under
 * /usr/lib/debug; inside the process's root first (containers), then in
 * ours: the process may be gone by the time DWARF is needed (a postgres
 * backend of one transaction), and a debug file is only taken when its
 * build ID or CRC matches anyway.  Never a FIFO or a device: opening
 * those can block the daemon for ever.  Last, by build ID, debuginfod's
 * file if it has fetched it; if not, the fetch starts now and this load
 * goes on without (libdwfl may call this at load time, for a symbol
 * table, and again when DWARF is first needed).
 */
int obj__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  GElf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct sym_obj *o = *userdata;
	char root[64] = "", path[PATH_MAX + 256];
	int fd = -ENOENT;
	struct stat st;

	if (!o)
		return -1;
	if (o->pid > 0) {
		snprintf(root, sizeof(root), "/proc/%d/root", o->pid);
		fd = find_under(o, root, debuglink_file, debuglink_crc, path, sizeof(path));
	}
	if (fd < 0)
		fd = find_under(o, "", debuglink_file, debuglink_crc, path, sizeof(path));
	if (fd >= 0)
		o->dbgd_wait = false;	/* installed since it last looked */
	else if (o->dbgd && o->build_id_len)
		fd = from_debuginfod(o, path, sizeof(path));
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0) {
		o->dbg_dev = st.st_dev;
		o->dbg_ino = st.st_ino;
	}
	*debuginfo_file_name = strdup(path);
	return fd;
}
