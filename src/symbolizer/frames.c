// SPDX-License-Identifier: BSD-2-Clause
/*
 * Answering questions about an address in one object: its frames (DWARF
 * scopes for inlined functions, the line table, the symbol table when
 * there is no DWARF, the start of its FDE when there are no symbols).
 */
#include <dwarf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/htab.h"
#include "symbolizer/demangle.h"
#include "symbolizer/obj.h"

/* --- derived strings --- */

static uint32_t sm_hash(const char *k1, const char *k2)
{
	return hash__final(hash__u64(hash__u64(HASH_SEED, (uintptr_t)k1), (uintptr_t)k2));
}

static bool sm_eq(const void *ctx, size_t pos, const void *key)
{
	const struct strmap *m = ctx;
	const struct str_entry *k = key;

	return m->v[pos].k1 == k->k1 && m->v[pos].k2 == k->k2;
}

/* The entry for (k1, k2); *found tells whether it was there already.
 * NULL when out of memory. */
static struct str_entry *sm_get(struct strmap *m, const char *k1, const char *k2, bool *found)
{
	struct str_entry k = {k1, k2, NULL};
	uint32_t h = sm_hash(k1, k2);
	struct htab_slot *slot;
	size_t oldcap = m->cap;
	long pos;

	if (htab__reserve(&m->index) || array__grow(&m->v, &m->cap, m->n + 1, sizeof(*m->v)))
		return NULL;
	m->bytes += (m->cap - oldcap) * sizeof(*m->v);
	pos = htab__find(&m->index, h, sm_eq, m, &k, &slot);
	*found = pos >= 0;
	if (pos >= 0)
		return &m->v[pos];
	m->v[m->n] = k;
	htab__set(&m->index, slot, h, m->n);
	return &m->v[m->n++];
}

static void sm_set(struct strmap *m, struct str_entry *e, char *val)
{
	e->val = val;
	if (val)
		m->bytes += strlen(val) + 1;
}

void strmap__free(struct strmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].val);
	free(m->v);
	htab__free(&m->index);
	memset(m, 0, sizeof(*m));
}

/* The demangled form of name if it is a C++ or Rust symbol
 * (demangle.h), else name itself.  Out of memory also means name itself. */
static const char *demangle(struct sym_obj *o, const char *name)
{
	struct str_entry *e;
	bool found;

	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return name;
	e = sm_get(&o->strs, name, NULL, &found);
	if (!e)
		return name;
	if (!found)
		sm_set(&o->strs, e, demangle__name(name));
	return e->val ? e->val : name;
}

/* fr's names: name as people read it, and as the binary has it when they
 * differ (pprof's Function.system_name). */
static void set_names(struct sym_obj *o, struct sym_frame *fr, const char *name)
{
	fr->function = demangle(o, name);
	fr->system_name = fr->function != name ? name : NULL;
}

/* "a/b", built once per pair of strings, "./" dropped from b's front. */
static const char *join(struct sym_obj *o, const char *a, const char *b)
{
	struct str_entry *e;
	bool found;
	size_t len;
	char *path;

	e = sm_get(&o->strs, a, b, &found);
	if (!e)
		return b;
	if (!found) {
		const char *rel = b;

		while (rel[0] == '.' && rel[1] == '/')
			rel += 2;
		len = strlen(a) + 1 + strlen(rel) + 1;
		path = malloc(len);
		if (path)
			snprintf(path, len, "%s/%s", a, rel);
		sm_set(&o->strs, e, path);
	}
	return e->val ? e->val : b;
}

/* A line table's file names are joined with their directory entries only,
 * which are often relative to the compilation directory (DWARF 5 from GCC
 * gives "tests/workloads/x.c").  Make them absolute, as addr2line does, so
 * a profile names a file a person can open. */
static const char *source_path(struct sym_obj *o, Dwarf_Die *cudie, const char *file)
{
	Dwarf_Attribute attr;
	const char *comp;

	if (!file || file[0] == '/')
		return file;
	comp = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	if (!comp || comp[0] != '/')
		return file;
	return join(o, comp, file);
}

/* A position lines.c found: its directory and name, joined and absolute. */
static const char *pos_path(struct sym_obj *o, Dwarf_Die *cudie, const struct line_pos *pos)
{
	if (!pos->name)
		return NULL;
	return source_path(o, cudie, pos->dir && pos->name[0] != '/' ? join(o, pos->dir, pos->name)
								     : pos->name);
}

/* File and line at pc from the unit's line table: lines.c's bounded
 * decoding, or libdw's where lines.c does not know the table's form or
 * will not keep a unit that large. */
static void line_at(struct sym_obj *o, Dwarf_Die *cudie, Dwarf_Addr pc, const char **file,
		    int *line)
{
	struct line_pos pos;
	Dwarf_Line *dl;
	int err = lines__at(&o->lines, cudie, pc, &pos);

	if (!err) {
		*file = pos_path(o, cudie, &pos);
		*line = pos.line;
		return;
	}
	if ((err != -ENOTSUP && err != -E2BIG) || !(dl = dwarf_getsrc_die(cudie, pc)))
		return;
	*file = source_path(o, cudie, dwarf_linesrc(dl, NULL, NULL));
	dwarf_lineno(dl, line);
}

/* File idx of the unit's table (DW_AT_call_file), the same way. */
static const char *call_file(struct sym_obj *o, Dwarf_Die *cudie, Dwarf_Word idx)
{
	struct line_pos pos;
	Dwarf_Files *files;
	int err = lines__file(&o->lines, cudie, idx, &pos);

	if (!err)
		return pos_path(o, cudie, &pos);
	if ((err != -ENOTSUP && err != -E2BIG) || dwarf_getsrcfiles(cudie, &files, NULL))
		return NULL;
	return source_path(o, cudie, dwarf_filesrc(files, idx, NULL, NULL));
}

/*
 * A DIE's function names: the demangled linkage name (which has the
 * namespaces, class and parameters DW_AT_name lacks: "cgraph_node::expand()",
 * not "expand"), else DW_AT_name (both followed through abstract origins
 * and specifications by dwarf_attr_integrate), else the raw linkage name.
 * The linkage name is the system name whenever there is one.
 */
static void die_names(struct sym_obj *o, Dwarf_Die *die, struct sym_frame *fr)
{
	Dwarf_Attribute attr;
	const char *linkage, *name;

	linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!linkage)
		linkage =
		    dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	name = linkage ? demangle(o, linkage) : NULL;
	if (!name || name == linkage)
		name = dwarf_diename(die) ?: linkage;
	fr->function = name;
	fr->system_name = linkage && linkage != name ? linkage : NULL;
}

/*
 * The function symbol holding vaddr: among the symbols at the nearest
 * start at or below it, one whose size covers it, or one of size zero
 * (which covers up to the next symbol, as libdwfl reads them).
 */
static const char *symbol_name(struct sym_obj *o, uint64_t vaddr)
{
	size_t lo = 0, hi = o->nfsyms;
	const struct fsym *f, *last;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->fsyms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* The aliases at the nearest start at or below vaddr: [f, last]. */
	last = &o->fsyms[lo - 1];
	for (f = last; f > o->fsyms && f[-1].addr == last->addr; f--)
		;
	for (const struct fsym *g = f; g <= last; g++) {
		if (g->size == 0 || vaddr < g->addr + g->size)
			return f->name;	/* f: the preferred alias */
	}
	return NULL;
}

/*
 * A function no symbol names (static functions of a stripped binary):
 * named after its FDE's start, "postgres+0x1c2f30", so that each function
 * stays its own node and pprof gets one Function per FDE.  The number is
 * the ELF address addr2line and gdb take.  Kept in strs under (path,
 * start), a pair no source path uses.
 */
static const char *fde_name(struct sym_obj *o, uint64_t vaddr)
{
	const char *base = strrchr(o->path, '/');
	struct sym_cfi row;
	struct str_entry *e;
	uint64_t start;
	char buf[300];
	bool found;

	/* A signal trampoline (glibc's __restore_rt is a local symbol, in
	 * no .dynsym): named for what it is, as gdb does. */
	if (obj__cfi(o, vaddr, &row) == 0 && row.signal)
		return "[signal handler called]";
	/* The covering CFI row's start is a fallback only: a function has a
	 * row per change of its CFA. */
	if (obj__fde_start(o, vaddr, &start)) {
		if (obj__cfi(o, vaddr, &row))
			return NULL;
		start = row.fde_start;
	}
	e = sm_get(&o->strs, o->path, (const char *)(uintptr_t)start, &found);
	if (!e)
		return NULL;
	if (!found) {
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, base ? base + 1 : o->path, start);
		sm_set(&o->strs, e, strdup(buf));
	}
	return e->val;
}

/* Inlined instances nested deeper than this end the chain early: the
 * function is then not reached, and the frames are cut like any deeper
 * than SYM_MAX_FRAMES. */
#define SCOPES_MAX 64

/*
 * The symbol table's answer alone, one frame or none: what a symbolizer in
 * coarse mode gives (symbolizer__set_coarse).  Not obj__frames() without
 * DWARF: its dwfl_module_addrdie loads the object's DWARF into libdw,
 * whether obj__load_dwarf() ran or not.
 */
/* fr's names from the symbol table, else after the FDE; false if neither knows. */
static bool symbol_names(struct sym_obj *o, uint64_t vaddr, struct sym_frame *fr)
{
	const char *name = symbol_name(o, vaddr);

	if (name) {
		set_names(o, fr, name);
		return true;
	}
	fr->function = fde_name(o, vaddr);
	fr->system_name = NULL;
	return fr->function != NULL;
}

int obj__symbol_frames(struct sym_obj *o, uint64_t vaddr, struct sym_frame *fr)
{
	symbol_names(o, vaddr, &fr[0]);
	fr[0].file = NULL;
	fr[0].line = 0;
	return fr[0].function ? 1 : 0;
}

/*
 * Frames from DWARF scopes, innermost first.  The innermost frame gets the
 * line table's file:line at pc; each outer one gets the call site recorded
 * on the inlined_subroutine it contains.  Returns 0 if pc is in no function
 * DWARF knows (the caller falls back to the symbol table).
 */
int obj__frames(struct sym_obj *o, uint64_t vaddr, struct sym_frame *fr)
{
	Dwarf_Die *cudie, scopes[SCOPES_MAX];
	bool inlined[SCOPES_MAX];
	Dwarf_Addr bias, pc;
	const char *file = NULL;
	int nscopes, i, n = 0, line = 0;

	cudie = dwfl_module_addrdie(o->mod, vaddr, &bias);
	if (!cudie) {
		dwfl_errno(); /* no DWARF here: symbols only */
		goto out;
	}
	pc = vaddr - bias;
	line_at(o, cudie, pc, &file, &line);

	/* The physical nesting at pc: inlined instances, then the function
	 * (as eu-addr2line -i gives it), from the unit's index. */
	nscopes = scopes__at(&o->scopes, cudie, pc, scopes, inlined, SCOPES_MAX);
	for (i = 0; i < nscopes; i++) {
		Dwarf_Die *die = &scopes[i];
		Dwarf_Attribute attr;
		Dwarf_Word val;
		int idx;

		/* Deeper inlining than fits keeps the innermost frames and
		 * the physical function, which overwrites the last slot. */
		idx = n < SYM_MAX_FRAMES ? n++ : SYM_MAX_FRAMES - 1;
		die_names(o, die, &fr[idx]);
		fr[idx].file = file;
		fr[idx].line = line;
		if (!inlined[i])
			break;

		/* The frame that contains this inline is at its call site. */
		file = NULL;
		line = 0;
		if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &val))
			file = call_file(o, cudie, val);
		if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &val))
			line = val;
	}
	/* A function without a name in DWARF (rare, e.g. some assembly):
	 * the symbol table may still know it. */
	if (n && !fr[n - 1].function)
		symbol_names(o, vaddr, &fr[n - 1]);
out:
	if (!n) {
		/* Outside any subprogram but maybe still in the line table
		 * (assembly with line info): name from the symbols. */
		symbol_names(o, vaddr, &fr[0]);
		fr[0].file = file;
		fr[0].line = line;
		n = fr[0].function || file ? 1 : 0;
	}
	return n;
}
