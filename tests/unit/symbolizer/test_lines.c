// SPDX-License-Identifier: BSD-2-Clause
/*
 * lines.c against libdw itself: for every unit of real DWARF (libc6-dbg's
 * DWARF 5, this build's gcc output, rustc's DWARF 4), every row's address
 * and the addresses beside it answer as dwarf_getsrc_die answers, and
 * every file index as dwarf_filesrc does; while the decoded units stay
 * within their bound.  Then truncated and corrupted tables, which must
 * give an error, never a read outside the section.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolizer/lines.h"
#include "symtest.h"

static void joined(char *buf, size_t n, const struct line_pos *p)
{
	if (!p->name)
		snprintf(buf, n, "(none)");
	else if (p->dir && p->name[0] != '/')
		snprintf(buf, n, "%s/%s", p->dir, p->name);
	else
		snprintf(buf, n, "%s", p->name);
}

struct tally {
	size_t units, rows, lookups, files, max_unit_bytes, big;
};

/* One address: ours against libdw's. */
static void same_at(struct lines *l, Dwarf_Die *cu, Dwarf_Addr a, struct tally *t, const char *f)
{
	Dwarf_Line *dl = dwarf_getsrc_die(cu, a);
	struct line_pos p;
	int err = lines__at(l, cu, a, &p);
	char ours[PATH_MAX], theirs[PATH_MAX];
	int line = 0;

	t->lookups++;
	if (err == -E2BIG) {
		t->big++;	/* a unit left to libdw: it answers there */
		return;
	}
	if (!dl) {
		cr_assert_eq(err, -ENOENT, "%s: %#lx: libdw has no row, lines.c %d", f,
			     (unsigned long)a, err);
		return;
	}
	cr_assert_eq(err, 0, "%s: %#lx: lines.c %d, libdw a row", f, (unsigned long)a, err);
	dwarf_lineno(dl, &line);
	const char *src = dwarf_linesrc(dl, NULL, NULL);

	joined(ours, sizeof(ours), &p);
	snprintf(theirs, sizeof(theirs), "%s", src ? src : "(none)");
	cr_assert_eq(p.line, line, "%s: %#lx: line %d, libdw %d", f, (unsigned long)a, p.line, line);
	cr_assert_str_eq(ours, theirs, "%s: %#lx", f, (unsigned long)a);
}

static void compare_file(const char *path, struct tally *t)
{
	struct lines l = {0};
	Dwarf_Off off = 0, next;
	size_t hsize;
	int fd = open(path, O_RDONLY);
	Dwarf *dw;

	cr_assert(fd >= 0, "%s: %s", path, strerror(errno));
	dw = dwarf_begin(fd, DWARF_C_READ);
	cr_assert_not_null(dw, "%s: %s", path, dwarf_errmsg(-1));
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *dls;
		Dwarf_Files *files;
		size_t n = 0, nf = 0;

		if (!dwarf_offdie(dw, off + hsize, &cu) || dwarf_getsrclines(&cu, &dls, &n)) {
			off = next;
			continue;
		}
		t->units++;
		t->rows += n;
		for (size_t i = 0; i < n; i++) {
			Dwarf_Addr a;

			dwarf_lineaddr(dwarf_onesrcline(dls, i), &a);
			same_at(&l, &cu, a, t, path);
			same_at(&l, &cu, a + 1, t, path);
			if (a)
				same_at(&l, &cu, a - 1, t, path);
		}
		cr_assert(!n || l.mru != NULL);
		if (!dwarf_getsrcfiles(&cu, &files, &nf)) {
			for (size_t i = 0; i < nf + 2; i++) {
				struct line_pos p;
				const char *src = i < nf ? dwarf_filesrc(files, i, NULL, NULL) : NULL;
				int err = lines__file(&l, &cu, i, &p);
				char ours[PATH_MAX];

				t->files++;
				if (err == -E2BIG)
					continue;
				/* libdw's entry 0 before DWARF 5 is its "???". */
				if (!src || !strcmp(src, "???")) {
					cr_assert(err == -ENOENT || (i == 0 && !err), "%s: file %zu: %d",
						  path, i, err);
					continue;
				}
				cr_assert_eq(err, 0, "%s: file %zu: %d", path, i, err);
				joined(ours, sizeof(ours), &p);
				cr_assert_str_eq(ours, src, "%s: file %zu", path, i);
			}
		}
		if (l.mru && l.bytes > t->max_unit_bytes)
			t->max_unit_bytes = l.bytes;
		/* The bound holds but for the unit just decoded. */
		cr_assert(l.bytes <= LINES_MAX_BYTES || l.nunits == 1, "%zu bytes in %zu units",
			  l.bytes, l.nunits);
		off = next;
	}
	lines__free(&l);
	cr_assert_eq(l.bytes, 0);
	dwarf_end(dw);
	close(fd);
}

Test(lines, as_libdw_on_gcc_output)
{
	struct tally t = {0};
	char *p = symtest__build_path("tests/inline_target");

	compare_file(p, &t);
	cr_assert(t.units >= 1 && t.rows > 20, "%zu units, %zu rows", t.units, t.rows);
	free(p);
	p = symtest__build_path("profd");
	compare_file(p, &t);
	free(p);
	cr_log_info("gcc: %zu units, %zu rows, %zu lookups, %zu files", t.units, t.rows, t.lookups,
		    t.files);
	cr_assert_eq(t.big, 0);
}

Test(lines, as_libdw_on_rust_dwarf4)
{
	struct tally t = {0};
	char *p = symtest__build_path("tests/rust_target");

	if (access(p, R_OK)) {
		free(p);
		cr_skip_test("no rust_target in this build (cross builds have none)");
	}
	compare_file(p, &t);
	cr_assert(t.units >= 1 && t.rows > 100, "%zu units, %zu rows", t.units, t.rows);
	free(p);
}

/* libc6-dbg: DWARF 5 with compressed sections and line_strp names, 2,000
 * units; the bound is what lets a build touch them all. */
Test(lines, as_libdw_on_libc_debug, .timeout = 300)
{
	struct tally t = {0};
	char *p = symtest__libc_debug();

	cr_assert_not_null(p, "libc6-dbg is a test dependency (scripts/deps.sh)");
	compare_file(p, &t);
	cr_assert(t.units > 500, "%zu units", t.units);
	cr_assert_eq(t.big, 0, "libc's units all fit LINES_MAX_ROWS: %zu lookups refused", t.big);
	cr_log_info("libc: %zu units, %zu rows, %zu lookups, %zu files", t.units, t.rows,
		    t.lookups, t.files);
	free(p);
}

/* The file offset and size of path's .debug_line. */
static void line_section(const char *path, off_t *off, size_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	cr_assert(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert(elf && !elf_getshdrstrndx(elf, &shstrndx));
	*size = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".debug_line")) {
			cr_assert(!(sh.sh_flags & SHF_COMPRESSED));
			*off = (off_t)sh.sh_offset;
			*size = sh.sh_size;
		}
	}
	elf_end(elf);
	close(fd);
	cr_assert(*size > 64, "no .debug_line in %s", path);
}

/*
 * A line table is whoever's the object is.  Corrupted copies of a real one
 * (bytes changed at random: lengths, counts, forms, opcodes) get an error or
 * some answer, never a read outside the section (the sanitized build and
 * the fuzz target fuzz_elf check that), and the bound holds.
 */
Test(lines, corrupted_tables, .timeout = 120)
{
	char *src = symtest__build_path("tests/inline_target"), tmp[] = "/tmp/profd-lines-XXXXXX";
	size_t size = 0, len;
	off_t off = 0;
	unsigned char *orig, *buf;
	FILE *f;
	int fd, answered = 0, refused = 0;

	line_section(src, &off, &size);
	f = fopen(src, "rb");
	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	orig = malloc(len);
	buf = malloc(len);
	cr_assert(orig && buf && fread(orig, 1, len, f) == len);
	fclose(f);
	fd = mkstemp(tmp);
	cr_assert(fd >= 0);
	srandom(19);
	for (int round = 0; round < 300; round++) {
		struct lines l = {0};
		Dwarf_Off cuoff = 0, next;
		size_t hsize;
		Dwarf *dw;

		memcpy(buf, orig, len);
		for (int k = 0, n = 1 + (int)(random() % 8); k < n; k++) {
			/* Most changes in the headers, where lengths and forms are. */
			size_t at = random() % 2 ? (size_t)random() % 64 : (size_t)random() % size;

			buf[off + (off_t)at] = (unsigned char)random();
		}
		cr_assert(pwrite(fd, buf, len, 0) == (ssize_t)len);
		dw = dwarf_begin(fd, DWARF_C_READ);
		cr_assert_not_null(dw);
		while (dwarf_nextcu(dw, cuoff, &next, &hsize, NULL, NULL, NULL) == 0) {
			Dwarf_Die cu;
			Dwarf_Addr lo = 0;
			struct line_pos p;

			if (dwarf_offdie(dw, cuoff + hsize, &cu)) {
				dwarf_lowpc(&cu, &lo);
				for (uint64_t a = lo; a < lo + 4096; a += 61) {
					int err = lines__at(&l, &cu, a, &p);

					cr_assert(err == 0 || err == -ENOENT || err == -EINVAL ||
						  err == -ENOTSUP || err == -E2BIG, "%d", err);
					if (!err) {
						answered++;
						/* What it names must be readable. */
						if (p.name)
							cr_assert(strlen(p.name) < len);
						if (p.dir)
							cr_assert(strlen(p.dir) < len);
					} else if (err != -ENOENT) {
						refused++;
					}
				}
				for (uint64_t i = 0; i < 8; i++)
					lines__file(&l, &cu, i, &p);
			}
			cuoff = next;
		}
		cr_assert(l.bytes <= LINES_MAX_BYTES || l.nunits == 1);
		lines__free(&l);
		dwarf_end(dw);
	}
	cr_log_info("corrupted: %d answers, %d refusals", answered, refused);
	cr_assert(answered > 0 && refused > 0, "%d answers, %d refusals", answered, refused);
	close(fd);
	unlink(tmp);
	free(orig);
	free(buf);
	free(src);
}

/* ---- crafted tables: a DWARF 5 unit written here, put in a copy of a
 * real binary with objcopy, so the unit that libdw opens is ours ---- */

struct buf {
	unsigned char *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *v, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
		cr_assert_not_null(b->p);
	}
	memcpy(b->p + b->n, v, n);
	b->n += n;
}

static void put_u8(struct buf *b, unsigned v)
{
	unsigned char c = (unsigned char)v;

	put(b, &c, 1);
}

static void put_u32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put_uleb(struct buf *b, uint64_t v)
{
	do {
		unsigned char c = v & 0x7f;

		v >>= 7;
		put_u8(b, c | (v ? 0x80 : 0));
	} while (v);
}

/*
 * One unit: ndirs directories and nfiles files, every name the string at
 * offset 0 of .debug_line_str; a program with one row at 0x1000, line
 * `line`, file 1, and a sequence ending at 0x1040.  header_len: what the
 * header says it takes (0: its real length).
 */
static struct buf crafted_unit_line(size_t ndirs, unsigned dir_forms, size_t nfiles,
				    uint32_t header_len, uint64_t line)
{
	struct buf u = {0}, h = {0}, prog = {0};
	static const unsigned char std_lengths[12] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
	uint64_t addr = 0x1000;

	put_u8(&h, 1);			/* minimum_instruction_length */
	put_u8(&h, 1);			/* maximum_operations_per_instruction */
	put_u8(&h, 1);			/* default_is_stmt */
	put_u8(&h, 0xfb);		/* line_base -5 */
	put_u8(&h, 14);			/* line_range */
	put_u8(&h, 13);			/* opcode_base */
	put(&h, std_lengths, sizeof(std_lengths));
	put_u8(&h, dir_forms);		/* directory entry format: path as line_strp */
	for (unsigned i = 0; i < dir_forms; i++) {
		put_uleb(&h, DW_LNCT_path);
		put_uleb(&h, DW_FORM_line_strp);
	}
	put_uleb(&h, ndirs);
	for (size_t i = 0; i < ndirs * dir_forms; i++)
		put_u32(&h, 0);
	put_u8(&h, 2);			/* file entry format: path, directory */
	put_uleb(&h, DW_LNCT_path);
	put_uleb(&h, DW_FORM_line_strp);
	put_uleb(&h, DW_LNCT_directory_index);
	put_uleb(&h, DW_FORM_udata);
	put_uleb(&h, nfiles);
	for (size_t i = 0; i < nfiles; i++) {
		put_u32(&h, 0);
		put_uleb(&h, 0);
	}
	put_u8(&prog, 0);		/* DW_LNE_set_address 0x1000 */
	put_uleb(&prog, 9);
	put_u8(&prog, DW_LNE_set_address);
	put(&prog, &addr, 8);
	put_u8(&prog, DW_LNS_advance_line);
	put_uleb(&prog, line - 1);	/* sleb: fine while under 2^62 */
	put_u8(&prog, DW_LNS_copy);
	put_u8(&prog, DW_LNS_advance_pc);
	put_uleb(&prog, 0x40);
	put_u8(&prog, 0);		/* DW_LNE_end_sequence */
	put_uleb(&prog, 1);
	put_u8(&prog, DW_LNE_end_sequence);

	put_u32(&u, (uint32_t)(2 + 2 + 4 + h.n + prog.n));	/* unit_length */
	unsigned char ver[4] = {5, 0, 8, 0};			/* version 5, 8-byte addresses */

	put(&u, ver, 4);
	put_u32(&u, header_len ? header_len : (uint32_t)h.n);
	put(&u, h.p, h.n);
	put(&u, prog.p, prog.n);
	free(h.p);
	free(prog.p);
	return u;
}

static struct buf crafted_unit_forms(size_t ndirs, unsigned dir_forms, size_t nfiles,
				     uint32_t header_len)
{
	return crafted_unit_line(ndirs, dir_forms, nfiles, header_len, 42);
}

static struct buf crafted_unit(size_t ndirs, size_t nfiles, uint32_t header_len)
{
	return crafted_unit_forms(ndirs, 1, nfiles, header_len);
}

/* A copy of inline_target (one unit, its stmt_list 0) with these
 * .debug_line and .debug_line_str; returns its descriptor. */
static int crafted_elf(const struct buf *line, const void *str, size_t nstr, char *path)
{
	char *src = symtest__build_path("tests/inline_target"), dir[] = "/tmp/profd-lines-XXXXXX", *cmd;
	FILE *f;
	int fd;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, PATH_MAX, "%s/elf", dir);
	cr_assert(asprintf(&cmd, "%s/line", dir) > 0);
	f = fopen(cmd, "wb");
	cr_assert(f && fwrite(line->p, 1, line->n, f) == line->n && !fclose(f));
	free(cmd);
	cr_assert(asprintf(&cmd, "%s/str", dir) > 0);
	f = fopen(cmd, "wb");
	cr_assert(f && fwrite(str, 1, nstr, f) == nstr && !fclose(f));
	free(cmd);
	/* The build's own objcopy: under qemu-user (t_arm64_build) the
	 * host's reads no arm64 file, and a cross one is installed. */
	static const char *objcopies[] = {"objcopy", "aarch64-linux-gnu-objcopy",
					  "x86_64-linux-gnu-objcopy"};
	int rc = -1;

	for (size_t i = 0; i < sizeof(objcopies) / sizeof(objcopies[0]) && rc; i++) {
		cr_assert(asprintf(&cmd,
				   "%s --update-section .debug_line=%s/line "
				   "--update-section .debug_line_str=%s/str %s %s 2>/dev/null",
				   objcopies[i], dir, dir, src, path) > 0);
		rc = system(cmd);
		free(cmd);
	}
	cr_assert_eq(rc, 0, "no objcopy could rewrite %s", src);
	free(src);
	fd = open(path, O_RDONLY);
	cr_assert(fd >= 0);
	return fd;
}

static void crafted_cleanup(const char *path)
{
	char *cmd;

	cr_assert(asprintf(&cmd, "rm -rf \"$(dirname %s)\"", path) > 0);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

static Dwarf *first_unit(int fd, Dwarf_Die *cu)
{
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	Dwarf_Off next;
	size_t hsize;

	cr_assert_not_null(dw);
	cr_assert_eq(dwarf_nextcu(dw, 0, &next, &hsize, NULL, NULL, NULL), 0);
	cr_assert_not_null(dwarf_offdie(dw, hsize, cu));
	return dw;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The crafted unit decodes, and answers as libdw does. */
Test(lines, crafted_unit_answers)
{
	struct buf unit = crafted_unit(1, 2, 0);
	char path[PATH_MAX];
	static const char str[] = "/src\0";
	int fd = crafted_elf(&unit, str, sizeof(str) - 1, path);
	struct lines l = {0};
	struct line_pos p;
	Dwarf_Die cu;
	Dwarf *dw = first_unit(fd, &cu);

	cr_assert_eq(lines__at(&l, &cu, 0x1000, &p), 0);
	cr_assert_eq(p.line, 42);
	cr_assert_str_eq(p.name, "/src");
	cr_assert_eq(lines__at(&l, &cu, 0x103f, &p), 0);
	cr_assert_eq(lines__at(&l, &cu, 0x1040, &p), -ENOENT);
	cr_assert_eq(lines__at(&l, &cu, 0xfff, &p), -ENOENT);
	struct tally t = {0};

	same_at(&l, &cu, 0x1000, &t, path);
	same_at(&l, &cu, 0x1040, &t, path);
	lines__free(&l);
	dwarf_end(dw);
	close(fd);
	crafted_cleanup(path);
	free(unit.p);
}

/*
 * A string section of one long string, named by every entry of a large
 * table: each name is found without a scan of the section (a scan each
 * would be 264,000 x 4 MiB here, minutes of CPU).
 */
Test(lines, long_strings_cost_no_scan, .timeout = 120)
{
	size_t nstr = 4u << 20;
	/* 8,000 directories of 32 names each: a scan each would be 1 TB. */
	struct buf unit = crafted_unit_forms(8000, 32, 8000, 0);
	char path[PATH_MAX], *str = malloc(nstr + 1);
	struct lines l = {0};
	struct line_pos p;
	Dwarf_Die cu;
	Dwarf *dw;
	double t0;
	int fd;

	cr_assert_not_null(str);
	memset(str, 'a', nstr);
	str[0] = '/';
	str[nstr] = 0;
	fd = crafted_elf(&unit, str, nstr + 1, path);
	dw = first_unit(fd, &cu);
	t0 = cpu_seconds();
	cr_assert_eq(lines__at(&l, &cu, 0x1000, &p), 0);
	cr_assert_eq(p.line, 42);
	cr_assert(p.name && strlen(p.name) == nstr);
	cr_log_info("264,000 names of a 4 MiB string: %.3f s of CPU", cpu_seconds() - t0);
	/* A scan each takes minutes; no scan, milliseconds. */
	cr_assert(cpu_seconds() - t0 < 5.0);
	lines__free(&l);
	dwarf_end(dw);
	close(fd);

	/* The same section without its NUL: no name, and no read past it. */
	crafted_cleanup(path);
	fd = crafted_elf(&unit, str, nstr, path);
	dw = first_unit(fd, &cu);
	cr_assert_eq(lines__at(&l, &cu, 0x1000, &p), 0);
	cr_assert_null(p.name);
	lines__free(&l);
	dwarf_end(dw);
	close(fd);
	crafted_cleanup(path);
	free(str);
	free(unit.p);
}

/*
 * A header_length shorter than the fields it covers: refused, and
 * remembered.  Either a whole unit after it, or a unit that ends right
 * after those fields with opcode_base 255, where skipping the standard
 * opcode lengths would go 254 bytes past the unit (into the next
 * section's bytes here, where the file is mapped; past a heap buffer
 * where libdw decompressed the section).
 */
Test(lines, short_header_refused)
{
	for (uint32_t hl = 1; hl < 16; hl++) {
		struct buf unit = hl < 8 ? crafted_unit(1, 1, hl) : (struct buf){0};
		char path[PATH_MAX];
		static const char str[] = "/src\0";

		if (hl >= 8) {
			/* unit_length, version 5, sizes, header_length, then
			 * six fields: min_inst, max_ops, is_stmt, line_base,
			 * line_range, opcode_base 255; nothing after. */
			unsigned char tail[] = {5, 0, 8, 0, (unsigned char)(hl - 8), 0, 0, 0,
						1, 1, 1, 0xfb, 14, 255};

			put_u32(&unit, sizeof(tail));
			put(&unit, tail, sizeof(tail));
		}
		int fd = crafted_elf(&unit, str, sizeof(str) - 1, path);
		struct lines l = {0};
		struct line_pos p;
		Dwarf_Die cu;
		Dwarf *dw = first_unit(fd, &cu);

		int err = lines__at(&l, &cu, 0x1000, &p);

		cr_assert_eq(err, -EINVAL, "case %u: %d", hl, err);
		cr_assert_eq(l.decodes, 1);
		/* Remembered: asked again, not decoded again. */
		cr_assert_eq(lines__at(&l, &cu, 0x1001, &p), -EINVAL);
		cr_assert_eq(l.decodes, 1);
		lines__free(&l);
		dwarf_end(dw);
		close(fd);
		crafted_cleanup(path);
		free(unit.p);
	}
}

/* A unit with more rows than lines.c keeps is left to libdw. */
Test(lines, large_unit_left_to_libdw)
{
	struct buf unit = {0}, body = crafted_unit(1, 2, 0);
	char path[PATH_MAX];
	static const char str[] = "/src\0";
	uint32_t len;
	int fd;

	/* Before the end_sequence (its last 3 bytes), 140,000 more rows. */
	memcpy(&len, body.p, 4);
	put(&unit, body.p, body.n - 3);
	for (int i = 0; i < 140000; i++)
		put_u8(&unit, 13 + 5 + 14);	/* special: address +1, line +0 */
	put(&unit, body.p + body.n - 3, 3);
	len += 140000;
	memcpy(unit.p, &len, 4);
	fd = crafted_elf(&unit, str, sizeof(str) - 1, path);

	struct lines l = {0};
	struct line_pos p;
	Dwarf_Die cu;
	Dwarf *dw = first_unit(fd, &cu);

	cr_assert_eq(lines__at(&l, &cu, 0x1000, &p), -E2BIG);
	cr_assert_not_null(dwarf_getsrc_die(&cu, 0x1000), "libdw answers it");
	lines__free(&l);
	dwarf_end(dw);
	close(fd);
	crafted_cleanup(path);
	free(unit.p);
	free(body.p);
}

/*
 * Rows are kept as 8 bytes, line and file in one word: the more files a
 * unit has, the fewer bits its lines get (at least 18).  A line that does
 * not fit leaves the unit to libdw; one that does is answered here.
 */
Test(lines, lines_past_the_packed_width_left_to_libdw)
{
	static const struct {
		size_t nfiles;
		uint64_t line;
		int want;
	} cases[] = {
		{2, 600000, 0},			/* 2 files: 30 bits of line */
		{8000, 524287, 0},		/* 8000: 13 bits of file, 19 of line */
		{8000, 524288, -E2BIG},
		{2, 1ull << 31, -E2BIG},	/* libdw has no answer: its lines are int */
	};
	static const char str[] = "/src\0";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* Its sleb is signed: a line over 2^63 would be another test. */
		struct buf unit = crafted_unit_line(1, 1, cases[i].nfiles, 0, cases[i].line);
		char path[PATH_MAX];
		int fd = crafted_elf(&unit, str, sizeof(str) - 1, path);
		struct lines l = {0};
		struct line_pos p;
		Dwarf_Die cu;
		Dwarf *dw = first_unit(fd, &cu);
		Dwarf_Line *dl = dwarf_getsrc_die(&cu, 0x1000);
		int dline = 0;

		cr_assert_eq(lines__at(&l, &cu, 0x1000, &p), cases[i].want, "case %zu", i);
		if (cases[i].line < (1ull << 31)) {
			cr_assert_not_null(dl, "libdw answers case %zu", i);
			cr_assert_eq(dwarf_lineno(dl, &dline), 0);
		}
		if (!cases[i].want) {
			cr_assert_eq(p.line, dline, "case %zu: %d against libdw's %d", i, p.line,
				     dline);
			cr_assert_eq((uint64_t)p.line, cases[i].line);
		}
		lines__free(&l);
		dwarf_end(dw);
		close(fd);
		crafted_cleanup(path);
		free(unit.p);
	}
}
