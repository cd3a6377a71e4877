// SPDX-License-Identifier: BSD-2-Clause
/*
 * scratch.c: a debug file's copy on disk with its zlib sections inflated.
 * Real files (libc6-dbg's libc, this build's gcc output compressed by
 * objcopy) must come out with every section as libelf itself inflates it
 * and libdw reading the same units; then hostile headers and streams,
 * which must give an error and leave no file descriptor behind.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "symbolizer/scratch.h"
#include "symtest.h"

#define MAX (256ull << 20)

/* A directory on disk for the copies and the inputs: the build's. */
static char *disk_dir(void)
{
	char *dir = symtest__build_path("tests/scratch.XXXXXX");
	struct statfs sfs;

	cr_assert_not_null(mkdtemp(dir), "%s: %s", dir, strerror(errno));
	cr_assert_eq(statfs(dir, &sfs), 0);
	if (sfs.f_type == 0x01021994)
		cr_skip_test("the build directory is on tmpfs");
	return dir;
}

static void rm_rf(const char *dir)
{
	char *cmd;

	cr_assert(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* inline_target with its DWARF compressed by objcopy, in dir. */
static char *compressed_target(const char *dir)
{
	/* The build's own objcopy: under qemu-user (t_arm64_build) the
	 * host's reads no arm64 file, and a cross one is installed. */
	static const char *objcopies[] = {"objcopy", "aarch64-linux-gnu-objcopy",
					  "x86_64-linux-gnu-objcopy"};
	char *src = symtest__build_path("tests/inline_target"), *out, *cmd;
	int rc = -1;

	cr_assert(asprintf(&out, "%s/target.gz", dir) > 0);
	for (size_t i = 0; i < sizeof(objcopies) / sizeof(objcopies[0]) && rc; i++) {
		cr_assert(asprintf(&cmd, "%s --compress-debug-sections=zlib %s %s 2>/dev/null",
				   objcopies[i], src, out) > 0);
		rc = system(cmd);
		free(cmd);
	}
	cr_assert_eq(rc, 0, "no objcopy could compress %s", src);
	free(src);
	return out;
}

static size_t count_units(Elf *elf)
{
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	Dwarf_Off off = 0, next;
	size_t hsize, n = 0;

	cr_assert_not_null(dw, "libdw: %s", dwarf_errmsg(-1));
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		n++;
		off = next;
	}
	dwarf_end(dw);
	return n;
}

/*
 * The copy at fd against the file at path: the same sections, by name and
 * type, each holding what libelf inflates it to, none compressed where the
 * original was zlib; and libdw finds the same units in both.  Returns how
 * many sections were inflated.
 */
static size_t same_as_libelf(const char *path, int fd)
{
	int ofd = open(path, O_RDONLY);
	Elf *orig, *copy;
	size_t on, cn, ostr, cstr, inflated = 0;
	struct stat st;

	elf_version(EV_CURRENT);
	cr_assert(ofd >= 0);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq(st.st_nlink, 0, "the copy has a name");
	cr_assert_eq(st.st_mode & 0777, 0600);
	orig = elf_begin(ofd, ELF_C_READ, NULL);
	copy = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	cr_assert(orig && copy, "%s", elf_errmsg(-1));
	cr_assert_eq(elf_getshdrnum(orig, &on), 0);
	cr_assert_eq(elf_getshdrnum(copy, &cn), 0);
	cr_assert_eq(on, cn);
	cr_assert_eq(elf_getshdrstrndx(orig, &ostr), 0);
	cr_assert_eq(elf_getshdrstrndx(copy, &cstr), 0);
	for (size_t i = 1; i < on; i++) {
		Elf_Scn *os = elf_getscn(orig, i), *cs = elf_getscn(copy, i);
		GElf_Shdr osh, csh;
		Elf_Data *od, *cd;
		const char *name;

		cr_assert(gelf_getshdr(os, &osh) && gelf_getshdr(cs, &csh));
		name = elf_strptr(orig, ostr, osh.sh_name);
		cr_assert_str_eq(name, elf_strptr(copy, cstr, csh.sh_name));
		cr_assert_eq(osh.sh_type, csh.sh_type, "%s", name);
		if (osh.sh_type == SHT_NOBITS) {
			cr_assert_eq(osh.sh_size, csh.sh_size, "%s", name);
			continue;
		}
		if (osh.sh_flags & SHF_COMPRESSED) {
			cr_assert_eq(elf_compress(os, 0, 0), 1, "%s: %s", name, elf_errmsg(-1));
			cr_assert_not(csh.sh_flags & SHF_COMPRESSED, "%s still compressed", name);
			cr_assert_eq(gelf_getshdr(os, &osh)->sh_addralign, csh.sh_addralign, "%s",
				     name);
			inflated++;
		}
		od = elf_rawdata(os, NULL);
		cd = elf_rawdata(cs, NULL);
		cr_assert(od && cd, "%s", name);
		cr_assert_eq(od->d_size, cd->d_size, "%s: %zu against %zu bytes", name, od->d_size,
			     cd->d_size);
		cr_assert_eq(memcmp(od->d_buf, cd->d_buf, od->d_size), 0, "%s differs", name);
	}
	cr_assert_eq(count_units(copy), count_units(orig));
	elf_end(copy);
	elf_end(orig);
	close(ofd);
	return inflated;
}

Test(scratch, libc_debug_as_libelf_inflates_it, .timeout = 120)
{
	char *p = symtest__libc_debug(), *dir = disk_dir();
	int in, fd;

	cr_assert_not_null(p, "libc6-dbg is a test dependency (scripts/deps.sh)");
	in = open(p, O_RDONLY);
	cr_assert(in >= 0);
	fd = scratch__copy(in, dir, MAX, SCRATCH_INFLATE);
	cr_assert(fd >= 0, "%s: %s", p, strerror(-fd));
	/* libc6-dbg's: aranges, info, abbrev, line, str, line_str, loclists,
	 * rnglists */
	cr_assert_geq(same_as_libelf(p, fd), 6);
	close(fd);
	close(in);
	rm_rf(dir);
	free(dir);
	free(p);
}

Test(scratch, objcopy_output_as_libelf_inflates_it)
{
	char *dir = disk_dir(), *path = compressed_target(dir);
	int in = open(path, O_RDONLY), fd;

	fd = scratch__copy(in, dir, MAX, SCRATCH_INFLATE);
	cr_assert(fd >= 0, "%s", strerror(-fd));
	cr_assert_geq(same_as_libelf(path, fd), 3);
	close(fd);
	close(in);
	rm_rf(dir);
	free(path);
	free(dir);
}

/* Nothing compressed: nothing to do, unless a copy is asked for anyway
 * (a file another user could change under libdw's mapping). */
Test(scratch, plain_file_copied_only_when_asked)
{
	char *src = symtest__build_path("tests/inline_target"), *dir = disk_dir();
	int in = open(src, O_RDONLY), fd;

	cr_assert(in >= 0);
	cr_assert_eq(scratch__copy(in, dir, MAX, SCRATCH_INFLATE), -ENODATA);
	fd = scratch__copy(in, dir, MAX, SCRATCH_INFLATE | SCRATCH_ALWAYS);
	cr_assert(fd >= 0, "%s", strerror(-fd));
	cr_assert_eq(same_as_libelf(src, fd), 0);
	close(fd);
	close(in);
	rm_rf(dir);
	free(dir);
	free(src);
}

/* A copy in memory would save nothing: tmpfs is refused. */
Test(scratch, memory_filesystem_refused)
{
	char *dir = disk_dir(), *path = compressed_target(dir);
	struct statfs sfs;
	int in = open(path, O_RDONLY);

	if (statfs("/dev/shm", &sfs) || sfs.f_type != 0x01021994)
		cr_skip_test("/dev/shm is not tmpfs here");
	cr_assert_eq(scratch__copy(in, "/dev/shm", MAX, SCRATCH_INFLATE), -EXDEV);
	cr_assert_eq(scratch__copy(in, "/nonexistent/dir", MAX, SCRATCH_INFLATE), -ENOENT);
	close(in);
	rm_rf(dir);
	free(path);
	free(dir);
}

/* ---- hostile files: the objcopy output, its headers rewritten ---- */

struct image {
	unsigned char *p;
	size_t n;
};

static struct image slurp(const char *path)
{
	struct image im = {0};
	FILE *f = fopen(path, "rb");
	struct stat st;

	cr_assert(f && !fstat(fileno(f), &st));
	im.n = (size_t)st.st_size;
	im.p = malloc(im.n);
	cr_assert(im.p && fread(im.p, 1, im.n, f) == im.n);
	fclose(f);
	return im;
}

/* Section name's header in a 64-bit image (the build is 64-bit). */
static Elf64_Shdr *shdr_of(struct image *im, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)im->p;
	Elf64_Shdr *sh = (Elf64_Shdr *)(im->p + eh->e_shoff);
	const char *strs = (const char *)im->p + sh[eh->e_shstrndx].sh_offset;

	cr_assert_eq(im->p[EI_CLASS], ELFCLASS64);
	for (size_t i = 1; i < eh->e_shnum; i++)
		if (!strcmp(strs + sh[i].sh_name, name))
			return &sh[i];
	cr_assert_fail("no %s", name);
	return NULL;
}

/* What scratch__copy says of im written to a file (an error is wanted:
 * and with it, no descriptor left open). */
static int verdict(const char *dir, const struct image *im, size_t len, uint64_t max)
{
	char *path;
	int in, fds, r;
	FILE *f;

	cr_assert(asprintf(&path, "%s/hostile", dir) > 0);
	f = fopen(path, "wb");
	cr_assert(f && fwrite(im->p, 1, len, f) == len && !fclose(f));
	in = open(path, O_RDONLY);
	cr_assert(in >= 0);
	fds = count_fds();
	r = scratch__copy(in, dir, max, SCRATCH_INFLATE);
	if (r >= 0)
		close(r);
	cr_assert_eq(count_fds(), fds, "a descriptor was left open");
	close(in);
	unlink(path);
	free(path);
	return r;
}

Test(scratch, hostile_headers_and_streams_refused)
{
	char *dir = disk_dir(), *path = compressed_target(dir);
	struct image good = slurp(path), im = {malloc(good.n), good.n};
	Elf64_Shdr *sh;
	Elf64_Chdr *ch;

	cr_assert_not_null(im.p);
#define FRESH() (memcpy(im.p, good.p, good.n), sh = shdr_of(&im, ".debug_info"), \
		 ch = (Elf64_Chdr *)(im.p + sh->sh_offset))
	FRESH();
	cr_assert(sh->sh_flags & SHF_COMPRESSED);
	cr_assert(verdict(dir, &im, im.n, MAX) >= 0, "the unchanged file is taken");

	FRESH();
	ch->ch_size += 1;	/* the stream ends before the header's size */
	cr_assert_eq(verdict(dir, &im, im.n, MAX), -ENOEXEC);
	FRESH();
	ch->ch_size -= 1;	/* it goes on past it */
	cr_assert_eq(verdict(dir, &im, im.n, MAX), -ENOEXEC);
	FRESH();
	for (size_t i = sh->sh_size / 2; i < sh->sh_size / 2 + 16; i++)
		im.p[sh->sh_offset + i] ^= 0x5a;	/* not zlib any more */
	cr_assert_eq(verdict(dir, &im, im.n, MAX), -ENOEXEC);
	FRESH();
	ch->ch_addralign = 1ull << 40;
	cr_assert_eq(verdict(dir, &im, im.n, MAX), -ENOEXEC);
	FRESH();
	ch->ch_addralign = 24;	/* not a power of two */
	cr_assert_eq(verdict(dir, &im, im.n, MAX), -ENOEXEC);
	FRESH();
	ch->ch_size = 1ull << 40;	/* a terabyte, claimed: past deflate's 1032:1 */
	cr_assert_eq(verdict(dir, &im, im.n, MAX), -ENOEXEC);
	FRESH();
	cr_assert_eq(verdict(dir, &im, im.n, 4096), -EFBIG, "over the caller's max");
	FRESH();
	sh->sh_offset = im.n;	/* past the end */
	cr_assert_eq(verdict(dir, &im, im.n, MAX), -ENOEXEC);
	FRESH();
	sh->sh_size = ~0ull;
	cr_assert_eq(verdict(dir, &im, im.n, MAX), -ENOEXEC);
	FRESH();
	sh->sh_size = 4;	/* shorter than its own header */
	cr_assert_eq(verdict(dir, &im, im.n, MAX), -ENOEXEC);
	FRESH();
	((Elf64_Ehdr *)im.p)->e_shoff = im.n;
	cr_assert_eq(verdict(dir, &im, im.n, MAX), -ENOEXEC);
	FRESH();
	((Elf64_Ehdr *)im.p)->e_shstrndx = 0xffff;
	cr_assert_eq(verdict(dir, &im, im.n, MAX), -ENOEXEC);
	FRESH();
	im.p[EI_DATA] = im.p[EI_DATA] == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB;
	cr_assert_eq(verdict(dir, &im, im.n, MAX), -ENOEXEC);
	FRESH();
	cr_assert_eq(verdict(dir, &im, 40, MAX), -ENOEXEC, "cut inside the ELF header");
	FRESH();
	/* Cut inside .debug_info's stream: its header is past the end. */
	cr_assert_eq(verdict(dir, &im, sh->sh_offset + sh->sh_size / 2, MAX), -ENOEXEC);
	/* Two headers over the same bytes: refused, so no stream is inflated
	 * once per header pointing at it, and no copy outgrows its input. */
	FRESH();
	{
		Elf64_Shdr *ab = shdr_of(&im, ".debug_abbrev");

		ab->sh_offset = sh->sh_offset;
		ab->sh_size = sh->sh_size;
	}
	cr_assert_eq(verdict(dir, &im, im.n, MAX), -ENOEXEC);
	/* Another compression (zstd): left as it is, for libdw to read or not. */
	FRESH();
	ch->ch_type = 2;
	cr_assert(verdict(dir, &im, im.n, MAX) >= 0);
	/* A section the program loads: libelf does not inflate it, and
	 * neither does the copy. */
	FRESH();
	sh->sh_flags |= SHF_ALLOC;
	cr_assert(verdict(dir, &im, im.n, MAX) >= 0);
	/* Bytes after the stream's end: refused, as libelf refuses them.  The
	 * section moves to the end of a longer file, one byte more. */
	{
		struct image big = {malloc(good.n + good.n), good.n};

		cr_assert_not_null(big.p);
		memcpy(big.p, good.p, good.n);
		sh = shdr_of(&big, ".debug_info");
		memcpy(big.p + big.n, big.p + sh->sh_offset, sh->sh_size);
		big.p[big.n + sh->sh_size] = 0x42;
		sh->sh_offset = big.n;
		big.n += sh->sh_size + 1;
		sh->sh_size += 1;
		cr_assert_eq(verdict(dir, &big, big.n, MAX), -ENOEXEC);
		sh->sh_size -= 1;
		cr_assert(verdict(dir, &big, big.n, MAX) >= 0, "moved, without the byte");
		free(big.p);
	}
#undef FRESH
	free(im.p);
	free(good.p);
	rm_rf(dir);
	free(path);
	free(dir);
}

/* Random bytes anywhere in the headers: an error or a copy, never a crash
 * and never a descriptor left behind. */
Test(scratch, random_header_corruption, .timeout = 120)
{
	char *dir = disk_dir(), *path = compressed_target(dir);
	struct image good = slurp(path), im = {malloc(good.n), good.n};
	Elf64_Ehdr *eh = (Elf64_Ehdr *)good.p;
	size_t taken = 0, chdr = shdr_of(&good, ".debug_info")->sh_offset;

	srand(19);
	for (int round = 0; round < 300; round++) {
		memcpy(im.p, good.p, good.n);
		for (int k = 0; k < 4; k++) {
			size_t at;

			/* The ELF header, the section headers, or a chdr. */
			switch (rand() % 3) {
			case 0:
				at = (size_t)rand() % sizeof(Elf64_Ehdr);
				break;
			case 1:
				at = eh->e_shoff + (size_t)rand() % (eh->e_shnum * sizeof(Elf64_Shdr));
				break;
			default:
				at = chdr + (size_t)rand() % sizeof(Elf64_Chdr);
			}
			if (at < im.n)
				im.p[at] = (unsigned char)rand();
		}
		taken += verdict(dir, &im, im.n, MAX) >= 0;
	}
	cr_log_info("%zu of 300 corrupted copies were still taken", taken);
	free(im.p);
	free(good.p);
	rm_rf(dir);
	free(path);
	free(dir);
}

/* Without SCRATCH_INFLATE, a copy: compressed sections stay compressed, and
 * every byte is the original's. */
Test(scratch, copy_without_inflating)
{
	char *dir = disk_dir(), *path = compressed_target(dir);
	int in = open(path, O_RDONLY), fd;
	Elf *a, *b;
	size_t n;

	cr_assert_eq(scratch__copy(in, dir, MAX, 0), -ENODATA);
	fd = scratch__copy(in, dir, MAX, SCRATCH_ALWAYS);
	cr_assert(fd >= 0, "%s", strerror(-fd));
	elf_version(EV_CURRENT);
	a = elf_begin(in, ELF_C_READ, NULL);
	b = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert(a && b);
	cr_assert_eq(elf_getshdrnum(a, &n), 0);
	for (size_t i = 1; i < n; i++) {
		GElf_Shdr x, y;
		Elf_Data *dx, *dy;

		cr_assert(gelf_getshdr(elf_getscn(a, i), &x) && gelf_getshdr(elf_getscn(b, i), &y));
		cr_assert_eq(x.sh_flags, y.sh_flags);
		if (x.sh_type == SHT_NOBITS)
			continue;
		dx = elf_rawdata(elf_getscn(a, i), NULL);
		dy = elf_rawdata(elf_getscn(b, i), NULL);
		cr_assert(dx && dy && dx->d_size == dy->d_size);
		cr_assert_eq(memcmp(dx->d_buf, dy->d_buf, dx->d_size), 0);
	}
	elf_end(a);
	elf_end(b);
	close(fd);
	close(in);
	rm_rf(dir);
	free(path);
	free(dir);
}

/* The directory must be root's: another user's could be a FUSE mount of
 * theirs, whose server would change the copy under libdw's mapping. */
Test(scratch, directory_of_another_user_refused)
{
	char *dir = disk_dir(), *path = compressed_target(dir), *sub;
	int in = open(path, O_RDONLY);

	if (geteuid())
		cr_skip_test("not root: no other user's directory to make");
	cr_assert(asprintf(&sub, "%s/users", dir) > 0);
	cr_assert_eq(mkdir(sub, 0777), 0);
	cr_assert_eq(chown(sub, 65534, 65534), 0);
	cr_assert_eq(scratch__copy(in, sub, MAX, SCRATCH_INFLATE), -EPERM);
	cr_assert_eq(chown(sub, 0, 0), 0);
	cr_assert_geq(scratch__copy(in, sub, MAX, SCRATCH_INFLATE), 0);
	close(in);
	rm_rf(dir);
	free(sub);
	free(path);
	free(dir);
}
