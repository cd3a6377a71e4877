// SPDX-License-Identifier: BSD-2-Clause
/*
 * DWARF line tables (versions 2 to 5), decoded a unit at a time into
 * 8-byte rows sorted as libdw sorts its own, so that a lookup answers as
 * dwarf_getsrc_die would.  See lines.h for why this is not libdw's.
 *
 * The file is whoever's the object is: every read is bounded by the
 * unit's length, counts are capped (LINES_MAX_ROWS, LINES_MAX_FILES), and
 * what this decoder does not know (a form, a version, a big-endian file)
 * is -ENOTSUP, for the caller to ask libdw instead.
 */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/htab.h"
#include "symbolizer/lines.h"

/* A unit with more rows, or files, than this is not kept here but left
 * to libdw (-E2BIG), which decodes it once and keeps it, as before
 * lines.c: two such units alternating would otherwise evict each other
 * at every new address.  libc6-dbg's largest unit has 14,011 rows, a
 * CPython 3.11 built with -g 71,434 (unicodeobject.c; ceval.c 20,648):
 * left to libdw, its units cost ~10 MiB more in a record that saw python
 * start (measured at e952b0b, whose bound was 16k rows). */
#define LINES_MAX_ROWS (1u << 17)
#define LINES_MAX_FILES (1u << 13)
/* Units kept at most, whatever their bytes: the search is a list walk. */
#define LINES_MAX_UNITS 256

/* file END_SEQ: the address after a sequence, which no pc is in. */
#define END_SEQ UINT32_MAX

/* A row as the program makes it, while its unit is decoded and sorted. */
struct line_row {
	uint64_t addr;
	uint32_t line;
	uint32_t file;		/* index in the unit's files, or END_SEQ */
};

/*
 * A row as it is kept: its address as an offset from the unit's lowest,
 * and line and file in one word, the file in the low fbits bits (the
 * unit's files, one more for an index past them, one more for the end of
 * a sequence).  A unit is at most 8k files (LINES_MAX_FILES, 14 bits), so
 * its lines fit 18 bits at least: 262,143.  A unit that spans 4 GiB, or
 * whose lines do not fit, is left to libdw (-E2BIG) like a large one.
 */
struct line_packed {
	uint32_t off;
	uint32_t lf;
};

struct line_file {
	const char *dir;	/* NULL: none */
	const char *name;	/* NULL: the table's entry 0 before DWARF 5 */
};

struct line_unit {
	struct line_unit *next;
	Dwarf *dw;
	Dwarf_Off off;		/* DW_AT_stmt_list: the key */
	struct line_row *rows;	/* while decoding; then packed */
	struct line_packed *packed;
	uint64_t base;		/* the lowest row's address */
	unsigned int fbits;
	size_t nrows;
	struct line_file *files;
	size_t nfiles;
	size_t bytes;
	int err;		/* the table could not be read: this, every time */
};

/* ---- reading ---- */

struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t rd_fixed(struct rd *r, unsigned int n)
{
	uint64_t v = 0;

	if (r->bad || r->p > r->end || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (unsigned int i = 0; i < n; i++)	/* little-endian: see lines_sections */
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

/* A LEB128 number; sign-extended from its last byte when sign. */
static uint64_t rd_leb(struct rd *r, bool sign)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (!r->bad && r->p < r->end) {
		unsigned char b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (sign && shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return v;
		}
	}
	r->bad = true;
	return 0;
}

static uint64_t rd_uleb(struct rd *r)
{
	return rd_leb(r, false);
}

static int64_t rd_sleb(struct rd *r)
{
	return (int64_t)rd_leb(r, true);
}

static const char *rd_string(struct rd *r)
{
	const unsigned char *nul;

	if (r->bad || r->p >= r->end || !(nul = memchr(r->p, 0, (size_t)(r->end - r->p)))) {
		r->bad = true;
		return NULL;
	}
	const char *s = (const char *)r->p;

	r->p = nul + 1;
	return s;
}

/* A string at off in a string section, whose size lines_sections cut
 * to its last NUL (as libdw does): any offset inside is a terminated
 * string, found without a scan, which a section of one long string
 * asked for at every entry of a table would make quadratic. */
static const char *str_at(const unsigned char *sec, size_t size, uint64_t off)
{
	if (!sec || off >= size)
		return NULL;
	return (const char *)sec + off;
}

/* ---- the sections ---- */

static int lines_sections(struct lines *l, Dwarf *dw)
{
	Elf *elf = dwarf_getelf(dw);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr eh;

	if (l->dw == dw)
		return l->line ? 0 : -ENOTSUP;
	l->dw = dw;
	l->line = l->line_str = l->str = NULL;
	l->line_size = l->line_str_size = l->str_size = 0;
	/* Both architectures profd runs on are little-endian; a big-endian
	 * file is libdw's to read. */
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return -ENOTSUP;
	while ((scn = elf_nextscn(elf, scn))) {
		const unsigned char **sec;
		size_t *size;
		const char *name;
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".debug_line"))
			sec = &l->line, size = &l->line_size;
		else if (!strcmp(name, ".debug_line_str"))
			sec = &l->line_str, size = &l->line_str_size;
		else if (!strcmp(name, ".debug_str"))
			sec = &l->str, size = &l->str_size;
		else
			continue;
		/* libdw decompressed the sections it knows when it opened
		 * the Dwarf (elf_compress, in the Elf; the header keeps its
		 * SHF_COMPRESSED).  Never again here: a second elf_compress
		 * frees the buffer libdw holds.  Data still compressed is
		 * ELF_T_CHDR, and not read. */
		if (sh.sh_type == SHT_NOBITS || !(data = elf_getdata(scn, NULL)) || !data->d_buf ||
		    data->d_type == ELF_T_CHDR)
			continue;
		*sec = data->d_buf;
		*size = data->d_size;
		if (sec != &l->line) {
			while (*size && (*sec)[*size - 1])
				(*size)--;
		}
	}
	return l->line ? 0 : -ENOTSUP;
}

/* ---- decoding one unit ---- */

struct hdr {
	unsigned int version, offsize;
	unsigned int min_inst;
	int line_base;
	unsigned int line_range, opcode_base;
	const unsigned char *std_lengths;
};

/* One attribute of a DWARF 5 directory or file entry: a string for
 * DW_LNCT_path, a number for DW_LNCT_directory_index, else skipped. */
static int entry_value(struct lines *l, struct rd *r, const struct hdr *h, uint64_t form,
		       const char **s, uint64_t *v)
{
	*s = NULL;
	*v = 0;
	switch (form) {
	case DW_FORM_string:
		*s = rd_string(r);
		break;
	case DW_FORM_line_strp:
		*s = str_at(l->line_str, l->line_str_size, rd_fixed(r, h->offsize));
		break;
	case DW_FORM_strp:
		*s = str_at(l->str, l->str_size, rd_fixed(r, h->offsize));
		break;
	case DW_FORM_udata:
		*v = rd_uleb(r);
		break;
	case DW_FORM_sdata:
		*v = (uint64_t)rd_sleb(r);
		break;
	case DW_FORM_data1:
		*v = rd_fixed(r, 1);
		break;
	case DW_FORM_data2:
		*v = rd_fixed(r, 2);
		break;
	case DW_FORM_data4:
		*v = rd_fixed(r, 4);
		break;
	case DW_FORM_data8:
		*v = rd_fixed(r, 8);
		break;
	case DW_FORM_data16:
		rd_fixed(r, 8), rd_fixed(r, 8);
		break;
	case DW_FORM_block: {
		uint64_t n = rd_uleb(r);

		if (r->bad || n > (uint64_t)(r->end - r->p))
			r->bad = true;
		else
			r->p += n;
		break;
	}
	default:
		return -ENOTSUP;	/* strx needs the unit's str_offsets base */
	}
	return r->bad ? -EINVAL : 0;
}

/* DWARF 5's self-describing directory or file table, into *out. */
static int entry_table(struct lines *l, struct rd *r, const struct hdr *h, bool files,
		       const struct line_file *dirs, size_t ndirs, struct line_file **out,
		       size_t *nout)
{
	uint64_t fmt[2 * 255], count;
	unsigned int nfmt = (unsigned int)rd_fixed(r, 1);
	int err;

	for (unsigned int i = 0; i < 2 * nfmt; i++)
		fmt[i] = rd_uleb(r);
	count = rd_uleb(r);
	if (r->bad)
		return -EINVAL;
	if (count > LINES_MAX_FILES)
		return -E2BIG;
	*out = calloc(count ? count : 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	*nout = count;
	for (uint64_t e = 0; e < count; e++) {
		const char *path = NULL;
		uint64_t dir = 0;

		for (unsigned int i = 0; i < nfmt; i++) {
			const char *s;
			uint64_t v;

			err = entry_value(l, r, h, fmt[2 * i + 1], &s, &v);
			if (err)
				return err;
			if (fmt[2 * i] == DW_LNCT_path)
				path = s;
			else if (fmt[2 * i] == DW_LNCT_directory_index)
				dir = v;
		}
		(*out)[e].name = path;
		if (files)
			(*out)[e].dir = dir < ndirs ? dirs[dir].name : NULL;
	}
	return 0;
}

/* Before DWARF 5: directories as strings, entry 0 the unit's comp_dir;
 * files as (name, directory, mtime, length), numbered from 1. */
static int old_tables(struct rd *r, const char *comp_dir, struct line_unit *u)
{
	const char **dirs = NULL;
	size_t ndirs = 1, dcap = 0, fcap = 0;
	int err = -ENOMEM;

	if (array__grow(&dirs, &dcap, 1, sizeof(*dirs)))
		goto cleanup;
	dirs[0] = comp_dir;
	for (;;) {
		const char *s = rd_string(r);

		if (!s || !*s)
			break;
		if (ndirs >= LINES_MAX_FILES) {
			err = -E2BIG;
			goto cleanup;
		}
		if (array__grow(&dirs, &dcap, ndirs + 1, sizeof(*dirs)))
			goto cleanup;
		dirs[ndirs++] = s;
	}
	/* Entry 0: no file (libdw's "???"). */
	if (array__grow(&u->files, &fcap, 1, sizeof(*u->files)))
		goto cleanup;
	u->files[0] = (struct line_file){NULL, NULL};
	u->nfiles = 1;
	for (;;) {
		const char *s = rd_string(r);
		uint64_t dir;

		if (!s || !*s)
			break;
		dir = rd_uleb(r);
		rd_uleb(r);
		rd_uleb(r);
		if (u->nfiles >= LINES_MAX_FILES) {
			err = -E2BIG;
			goto cleanup;
		}
		if (array__grow(&u->files, &fcap, u->nfiles + 1, sizeof(*u->files)))
			goto cleanup;
		u->files[u->nfiles++] = (struct line_file){dir < ndirs ? dirs[dir] : NULL, s};
	}
	err = r->bad ? -EINVAL : 0;
cleanup:
	free(dirs);
	return err;
}

static int add_row(struct line_unit *u, size_t *cap, uint64_t addr, uint64_t line, uint64_t file,
		   bool end)
{
	if (u->nrows >= LINES_MAX_ROWS)
		return -E2BIG;
	if (array__grow(&u->rows, cap, u->nrows + 1, sizeof(*u->rows)))
		return -ENOMEM;
	u->rows[u->nrows++] = (struct line_row){
		.addr = addr,
		.line = (uint32_t)line,
		.file = end ? END_SEQ : (file < END_SEQ ? (uint32_t)file : END_SEQ - 1),
	};
	return 0;
}

/* The line program's state machine, every row kept, as libdw keeps them. */
static int run_program(struct rd *r, const struct hdr *h, struct line_unit *u)
{
	/* line wraps as unsigned: a hostile table's sum is no UB */
	uint64_t addr = 0, file = 1, line = 1;
	size_t cap = 0;
	int err;

	while (r->p < r->end) {
		unsigned int op = *r->p++;

		if (op >= h->opcode_base) {
			unsigned int adj = op - h->opcode_base;

			addr += (uint64_t)h->min_inst * (adj / h->line_range);
			line += (uint64_t)(int64_t)(h->line_base + (int)(adj % h->line_range));
			err = add_row(u, &cap, addr, line, file, false);
			if (err)
				return err;
			continue;
		}
		switch (op) {
		case 0: {	/* extended */
			uint64_t len = rd_uleb(r);
			const unsigned char *next;

			if (r->bad || len > (uint64_t)(r->end - r->p))
				return -EINVAL;
			next = r->p + len;
			if (!len)
				break;
			switch (*r->p++) {
			case DW_LNE_end_sequence:
				err = add_row(u, &cap, addr, line, file, true);
				if (err)
					return err;
				addr = 0, file = 1, line = 1;
				break;
			case DW_LNE_set_address:
				if (len - 1 < 1 || len - 1 > 8)
					return -EINVAL;
				addr = rd_fixed(r, (unsigned int)(len - 1));
				break;
			default:	/* define_file, discriminator, vendors' */
				break;
			}
			r->p = next;
			break;
		}
		case DW_LNS_copy:
			err = add_row(u, &cap, addr, line, file, false);
			if (err)
				return err;
			break;
		case DW_LNS_advance_pc:
			addr += (uint64_t)h->min_inst * rd_uleb(r);
			break;
		case DW_LNS_advance_line:
			line += (uint64_t)rd_sleb(r);
			break;
		case DW_LNS_set_file:
			file = rd_uleb(r);
			break;
		case DW_LNS_const_add_pc:
			addr += (uint64_t)h->min_inst * ((255 - h->opcode_base) / h->line_range);
			break;
		case DW_LNS_fixed_advance_pc:
			addr += rd_fixed(r, 2);
			break;
		case DW_LNS_negate_stmt:
		case DW_LNS_set_basic_block:
		case DW_LNS_set_prologue_end:
		case DW_LNS_set_epilogue_begin:
			break;
		default:	/* set_column, set_isa, and opcodes this does not know */
			for (unsigned int i = 0; i < h->std_lengths[op - 1]; i++)
				rd_uleb(r);
			break;
		}
		if (r->bad)
			return -EINVAL;
	}
	return 0;
}

/* libdw's order: by address; at one address the end of a sequence before
 * a row that starts one; otherwise as the program wrote them (stable). */
static bool row_before(const struct line_row *a, const struct line_row *b)
{
	if (a->addr != b->addr)
		return a->addr < b->addr;
	return a->file == END_SEQ && b->file != END_SEQ;
}

static void merge_sort(struct line_row *v, struct line_row *tmp, size_t n)
{
	size_t mid = n / 2, i = 0, j = mid, k = 0;

	if (n < 2)
		return;
	merge_sort(v, tmp, mid);
	merge_sort(v + mid, tmp, n - mid);
	if (!row_before(&v[mid], &v[mid - 1]))
		return;	/* already in order: the usual case, one sequence after another */
	while (i < mid && j < n)
		tmp[k++] = row_before(&v[j], &v[i]) ? v[j++] : v[i++];
	while (i < mid)
		tmp[k++] = v[i++];
	memcpy(v, tmp, k * sizeof(*v));
}

static int sort_rows(struct line_unit *u)
{
	struct line_row *tmp;
	bool sorted = true;

	for (size_t i = 1; i < u->nrows && sorted; i++)
		sorted = !row_before(&u->rows[i], &u->rows[i - 1]);
	if (sorted)
		return 0;
	tmp = malloc(u->nrows * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	merge_sort(u->rows, tmp, u->nrows);
	free(tmp);
	return 0;
}

static int decode(struct lines *l, Dwarf_Off off, const char *comp_dir, struct line_unit *u)
{
	struct rd r = {.p = l->line, .end = l->line + l->line_size};
	struct line_file *dirs = NULL;
	size_t ndirs = 0;
	uint64_t len, hlen;
	struct hdr h = {.offsize = 4};
	int err = -EINVAL;

	if (off >= l->line_size)
		goto cleanup;
	r.p += off;
	len = rd_fixed(&r, 4);
	if (len == 0xffffffff) {
		h.offsize = 8;
		len = rd_fixed(&r, 8);
	} else if (len >= 0xfffffff0) {
		goto cleanup;
	}
	if (r.bad || len > (uint64_t)(r.end - r.p))
		goto cleanup;
	r.end = r.p + len;
	h.version = (unsigned int)rd_fixed(&r, 2);
	if (h.version < 2 || h.version > 5) {
		err = -ENOTSUP;
		goto cleanup;
	}
	if (h.version >= 5)
		rd_fixed(&r, 2);	/* address and segment selector sizes */
	hlen = rd_fixed(&r, h.offsize);
	if (r.bad || hlen > (uint64_t)(r.end - r.p))
		goto cleanup;
	const unsigned char *prog = r.p + hlen;

	h.min_inst = (unsigned int)rd_fixed(&r, 1);
	if (h.version >= 4)
		rd_fixed(&r, 1);	/* maximum_operations_per_instruction: VLIW only */
	rd_fixed(&r, 1);		/* default_is_stmt: libdw keeps every row */
	h.line_base = (int8_t)rd_fixed(&r, 1);
	h.line_range = (unsigned int)rd_fixed(&r, 1);
	h.opcode_base = (unsigned int)rd_fixed(&r, 1);
	/* A header_length shorter than the fields it covers puts them past
	 * prog: refused before any difference with prog is taken. */
	if (r.bad || r.p > prog || !h.line_range || !h.opcode_base ||
	    h.opcode_base - 1 > (size_t)(prog - r.p))
		goto cleanup;
	h.std_lengths = r.p;
	r.p += h.opcode_base - 1;

	/* The tables end where the header says, not where they stop. */
	struct rd t = {.p = r.p, .end = prog};

	if (h.version >= 5) {
		err = entry_table(l, &t, &h, false, NULL, 0, &dirs, &ndirs);
		if (!err)
			err = entry_table(l, &t, &h, true, dirs, ndirs, &u->files, &u->nfiles);
	} else {
		err = old_tables(&t, comp_dir, u);
	}
	if (err)
		goto cleanup;
	r.p = prog;
	err = run_program(&r, &h, u);
	if (!err)
		err = sort_rows(u);
	/* As libdw does for compilers that forget it: the unit's highest
	 * row ends a sequence (so no pc at or past it has a row). */
	if (!err && u->nrows)
		u->rows[u->nrows - 1].file = END_SEQ;
cleanup:
	free(dirs);
	return err;
}

/* ---- the cache ---- */

static void unit_free(struct line_unit *u)
{
	if (!u)
		return;
	free(u->rows);
	free(u->packed);
	free(u->files);
	free(u);
}

/* The decoded rows into their kept form: -E2BIG when they do not fit it. */
static int pack_rows(struct line_unit *u)
{
	uint32_t past = (uint32_t)u->nfiles, end = past + 1;
	uint64_t max_line;

	u->fbits = 1;
	while ((1u << u->fbits) <= end)
		u->fbits++;
	max_line = (1ull << (32 - u->fbits)) - 1;
	u->base = u->rows[0].addr;	/* sorted */
	u->packed = malloc(u->nrows * sizeof(*u->packed));
	if (!u->packed)
		return -ENOMEM;
	for (size_t i = 0; i < u->nrows; i++) {
		const struct line_row *r = &u->rows[i];
		uint64_t off = r->addr - u->base;
		uint32_t f = r->file == END_SEQ ? end : r->file < past ? r->file : past;
		uint64_t line = r->file == END_SEQ ? 0 : r->line;

		if (off > UINT32_MAX || line > max_line)
			return -E2BIG;
		u->packed[i] = (struct line_packed){(uint32_t)off, (uint32_t)(line << u->fbits) | f};
	}
	free(u->rows);
	u->rows = NULL;
	return 0;
}

/* cudie's unit, decoded if it is not kept, and moved to the front. */
static int unit_of(struct lines *l, Dwarf_Die *cudie, struct line_unit **out)
{
	struct line_unit **pp, *u;
	Dwarf *dw = cudie->cu ? dwarf_cu_getdwarf(cudie->cu) : NULL;
	Dwarf_Attribute attr;
	Dwarf_Word off;
	int err;

	if (!dw)
		return -ENOTSUP;
	if (!dwarf_attr(cudie, DW_AT_stmt_list, &attr) || dwarf_formudata(&attr, &off))
		return -ENOTSUP;	/* a split unit's table is its skeleton's */
	for (pp = &l->mru; (u = *pp); pp = &u->next) {
		if (u->dw == dw && u->off == off) {
			*pp = u->next;
			u->next = l->mru;
			l->mru = u;
			*out = u;
			return 0;
		}
	}
	err = lines_sections(l, dw);
	if (err)
		return err;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->dw = dw;
	u->off = off;
	err = decode(l, off, dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr)), u);
	if (!err && u->nrows)
		err = pack_rows(u);
	if (err == -ENOMEM) {
		unit_free(u);
		return err;
	}
	l->decodes++;
	/* A table that cannot be read is kept as its error, so a hostile
	 * file costs one decode per unit, not one per address asked. */
	if (err) {
		free(u->rows);
		free(u->packed);
		free(u->files);
		u->rows = NULL;
		u->packed = NULL;
		u->files = NULL;
		u->nrows = u->nfiles = 0;
		u->err = err;
	}
	/* What it keeps: packed rows and file table, right-sized. */
	if (u->nfiles) {
		struct line_file *files = realloc(u->files, u->nfiles * sizeof(*files));

		if (files)
			u->files = files;
	}
	u->bytes = sizeof(*u) + u->nrows * sizeof(*u->packed) + u->nfiles * sizeof(*u->files);
	u->next = l->mru;
	l->mru = u;
	l->bytes += u->bytes;
	l->nunits++;
	/* Over the bounds, the oldest go; the one just decoded stays. */
	for (pp = &u->next; *pp && (l->bytes > LINES_MAX_BYTES || l->nunits > LINES_MAX_UNITS);) {
		struct line_unit *last = *pp, **lp = pp;

		while (last->next) {
			lp = &last->next;
			last = last->next;
		}
		*lp = NULL;
		l->bytes -= last->bytes;
		l->nunits--;
		unit_free(last);
	}
	*out = u;
	return 0;
}

static int file_pos(const struct line_unit *u, uint64_t idx, struct line_pos *pos)
{
	if (idx >= u->nfiles || !u->files[idx].name)
		return -ENOENT;
	pos->dir = u->files[idx].name[0] == '/' ? NULL : u->files[idx].dir;
	pos->name = u->files[idx].name;
	return 0;
}

int lines__at(struct lines *l, Dwarf_Die *cudie, uint64_t pc, struct line_pos *pos)
{
	struct line_unit *u;
	size_t lo = 0, hi;
	uint32_t rel, f, fmask;
	int err = unit_of(l, cudie, &u);

	if (err)
		return err;
	if (u->err)
		return u->err;
	if (!u->nrows || pc < u->base)
		return -ENOENT;
	/* Every row is within 4 GiB of base: a pc past that is past them all. */
	rel = pc - u->base > UINT32_MAX ? UINT32_MAX : (uint32_t)(pc - u->base);
	/* The last row at or below pc, as dwarf_getsrc_die finds it. */
	hi = u->nrows - 1;
	while (lo < hi) {
		size_t mid = hi - (hi - lo) / 2;

		if (rel < u->packed[mid].off)
			hi = mid - 1;
		else
			lo = mid;
	}
	fmask = (1u << u->fbits) - 1;
	f = u->packed[lo].lf & fmask;
	if (u->packed[lo].off > rel || f == u->nfiles + 1)
		return -ENOENT;	/* before the first row, or a sequence's end */
	pos->line = (int)(u->packed[lo].lf >> u->fbits);
	if (file_pos(u, f, pos)) {
		pos->dir = pos->name = NULL;
	}
	return 0;
}

int lines__file(struct lines *l, Dwarf_Die *cudie, uint64_t idx, struct line_pos *pos)
{
	struct line_unit *u;
	int err = unit_of(l, cudie, &u);

	if (err)
		return err;
	if (u->err)
		return u->err;
	pos->line = 0;
	return file_pos(u, idx, pos);
}

void lines__free(struct lines *l)
{
	while (l->mru) {
		struct line_unit *u = l->mru;

		l->mru = u->next;
		unit_free(u);
	}
	l->bytes = 0;
	l->nunits = 0;
	l->dw = NULL;
	l->line = l->line_str = l->str = NULL;
}
