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
#include <unistd.h>

#include "symbolizer/lines.h"

static char *build_path(const char *rel)
{
	char self[PATH_MAX], *out = NULL;
	const char *b = getenv("BUILD");
	ssize_t n;

	if (b) {
		cr_assert(asprintf(&out, "%s/%s", b, rel) > 0);
		return out;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	cr_assert(n > 0);
	self[n] = 0;
	/* build/tests/unit_symbolizer */
	cr_assert(asprintf(&out, "%s/%s", dirname(dirname(self)), rel) > 0);
	return out;
}

/* libc's debug file, as libc6-dbg installs it (a test dependency). */
static char *libc_debug(void)
{
	static const char *libcs[] = {"/lib/x86_64-linux-gnu/libc.so.6",
				      "/lib/aarch64-linux-gnu/libc.so.6"};

	for (size_t i = 0; i < sizeof(libcs) / sizeof(libcs[0]); i++) {
		int fd = open(libcs[i], O_RDONLY);
		Elf *elf;
		Elf_Scn *scn = NULL;
		char *out = NULL;

		if (fd < 0)
			continue;
		elf_version(EV_CURRENT);
		elf = elf_begin(fd, ELF_C_READ, NULL);
		while (elf && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
			    !(d = elf_getdata(scn, NULL)))
				continue;
			GElf_Nhdr nh;
			size_t off = 0, no, dno;

			while ((off = gelf_getnote(d, off, &nh, &no, &dno)) > 0) {
				const unsigned char *id = (const unsigned char *)d->d_buf + dno;

				if (nh.n_type != NT_GNU_BUILD_ID || nh.n_descsz < 2)
					continue;
				char hex[128];
				size_t k = 0;

				for (size_t j = 0; j < nh.n_descsz && k + 3 < sizeof(hex); j++)
					k += snprintf(hex + k, sizeof(hex) - k, "%02x", id[j]);
				cr_assert(asprintf(&out, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex,
						   hex + 2) > 0);
			}
		}
		elf_end(elf);
		close(fd);
		if (out && access(out, R_OK) == 0)
			return out;
		free(out);
	}
	return NULL;
}

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
	size_t units, rows, lookups, files, max_unit_bytes;
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
	char *p = build_path("tests/inline_target");

	compare_file(p, &t);
	cr_assert(t.units >= 1 && t.rows > 20, "%zu units, %zu rows", t.units, t.rows);
	free(p);
	p = build_path("profd");
	compare_file(p, &t);
	free(p);
	cr_log_info("gcc: %zu units, %zu rows, %zu lookups, %zu files", t.units, t.rows, t.lookups,
		    t.files);
}

Test(lines, as_libdw_on_rust_dwarf4)
{
	struct tally t = {0};
	char *p = build_path("tests/rust_target");

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
	char *p = libc_debug();

	cr_assert_not_null(p, "libc6-dbg is a test dependency (scripts/deps.sh)");
	compare_file(p, &t);
	cr_assert(t.units > 500, "%zu units", t.units);
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
	char *src = build_path("tests/inline_target"), tmp[] = "/tmp/profd-lines-XXXXXX";
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
