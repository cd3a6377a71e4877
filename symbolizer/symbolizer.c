// SPDX-License-Identifier: BSD-2-Clause
/*
 * symbolizer: ELF objects through elfutils libdwfl, kernel through kallsyms.
 *
 * One cache entry per object identity (dev, ino), each with its own Dwfl
 * holding one module reported at base 0, so dwfl addresses are the ELF's own
 * virtual addresses for PIE/shared objects (ET_DYN) and executables (ET_EXEC)
 * alike.  Every entry also caches resolved offsets, because a profiler asks
 * about the same hot addresses over and over: a repeated lookup is a hash of
 * (dev, ino), a set-associative probe, and a copy.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kallsyms.h"
#include "symbolizer.h"

/* Result cache per object: 4-way set-associative, growing from RC_MIN_SLOTS
 * to RC_MAX_SLOTS, then replacing within a set.  16k results of a few
 * frames each is ~1 MiB, enough for the hot set of a large binary. */
#define RC_WAYS 4
#define RC_MIN_SLOTS 64
#define RC_MAX_SLOTS 16384

/* What an object costs besides its DWARF and symbols: the Dwfl, the module,
 * libelf's descriptors and our own struct.  A guess, used so that even
 * objects without debug info count for something against max_bytes. */
#define OBJ_BASE_BYTES 8192
/* libdwfl sorts the symbol table into its own array of ~24-byte entries;
 * round up for the name lookups it caches. */
#define SYM_BYTES 32

/*
 * __cxa_demangle lives in libstdc++, which profd doesn't link (see the
 * Makefile).  A weak reference picks it up when the integrator adds
 * -lstdc++ to LDLIBS; otherwise dlsym finds it if something else in the
 * process has loaded libstdc++.  Without either, C++ names stay mangled.
 */
extern char *__cxa_demangle(const char *name, char *buf, size_t *n, int *status)
    __attribute__((weak));
typedef char *(*demangle_fn)(const char *name, char *buf, size_t *n, int *status);

/* The default path of dwfl_standard_find_debuginfo spelled out, so the
 * search (next to the file, its .debug/, /usr/lib/debug/<dir>/ and
 * /usr/lib/debug/.build-id/xx/yyyy.debug) doesn't depend on a compiled-in
 * default.  libdwfl wants a char **, hence the two statics. */
static char debuginfo_path_buf[] = ":.debug:/usr/lib/debug";
static char *debuginfo_path = debuginfo_path_buf;

static const Dwfl_Callbacks dwfl_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

struct rc_slot {
	uint64_t off;
	struct sym_frame *frames; /* nframes entries; NULL when 0 */
	uint16_t nframes;
	bool used;
};

struct rcache {
	struct rc_slot *slots;
	size_t nslots;	       /* 0 or a power of two >= RC_MIN_SLOTS */
	unsigned int set_bits; /* log2(nslots / RC_WAYS) */
	size_t count;
	size_t bytes;	     /* slots + frame arrays */
	unsigned int victim; /* rotates the way replaced in a full set */
};

/*
 * Strings we derive from libdw's (demangled names, source paths made
 * absolute), keyed by the addresses of the strings they come from, which
 * are stable for the object's lifetime: each is built once, and results in
 * the result cache can point at them.
 */
struct str_entry {
	const char *k1, *k2; /* k1 == NULL: free slot */
	char *val;	     /* NULL: nothing derived, use the original */
};

struct strmap {
	struct str_entry *tab;
	size_t cap, count; /* cap: 0 or a power of two */
	size_t bytes;
};

struct seg {
	uint64_t off, filesz, vaddr;
};

struct fsym {
	uint64_t addr;
	uint64_t size;
	const char *name;	/* in libdwfl's copy of the string table */
	int rank;		/* GLOBAL 2, WEAK 1, LOCAL 0: the name to prefer for aliases */
};

struct sym_obj {
	uint64_t dev, ino;
	struct sym_obj *hnext;	     /* hash chain */
	struct sym_obj *prev, *next; /* LRU; symbolizer.lru.next is newest */
	/* Negative errno for a file that opened and matched its identity but
	 * isn't usable ELF, so repeated samples in it don't reopen it. */
	int err;
	Dwfl *dwfl;
	Dwfl_Module *mod; /* owned by dwfl */
	struct seg *segs;
	size_t nsegs;
	char *build_id;
	struct sym_object_info info;
	struct rcache rc;
	struct strmap strs;
	size_t base_bytes; /* estimate fixed at load time */
	size_t bytes;	   /* what this object adds to symbolizer.bytes */
	bool dwarf_loaded; /* obj_load_dwarf() ran */
	/* Defined functions sorted by address: dwfl_module_addrinfo scans the
	 * whole symbol table on every call (~100 us for postgres's). */
	struct fsym *fsyms;
	size_t nfsyms;
};

struct symbolizer {
	size_t max_bytes;
	size_t bytes; /* sum of sym_obj.bytes */
	size_t nobjs;
	struct sym_obj **tab; /* (dev, ino) -> object, chained */
	size_t tab_cap;	      /* 0 or a power of two */
	struct sym_obj lru;   /* sentinel */
	demangle_fn demangle;
	struct ksyms *ksyms;
	int ksyms_err; /* cached permanent failure of kallsyms */
};

/* --- result cache --- */

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static struct rc_slot *rc_set(const struct rcache *rc, uint64_t off)
{
	size_t set = hash64(off) & ((1ul << rc->set_bits) - 1);

	return &rc->slots[set * RC_WAYS];
}

static struct rc_slot *rc_find(const struct rcache *rc, uint64_t off)
{
	struct rc_slot *set;
	int i;

	if (!rc->nslots)
		return NULL;
	set = rc_set(rc, off);
	for (i = 0; i < RC_WAYS; i++)
		if (set[i].used && set[i].off == off)
			return &set[i];
	return NULL;
}

static void rc_drop(struct rcache *rc, struct rc_slot *slot)
{
	rc->bytes -= slot->nframes * sizeof(*slot->frames);
	rc->count--;
	free(slot->frames);
	memset(slot, 0, sizeof(*slot));
}

/* A slot for off: a free way of its set, or a victim evicted from it. */
static struct rc_slot *rc_claim(struct rcache *rc, uint64_t off)
{
	struct rc_slot *set = rc_set(rc, off);
	int i;

	for (i = 0; i < RC_WAYS; i++)
		if (!set[i].used)
			return &set[i];
	i = rc->victim++ % RC_WAYS;
	rc_drop(rc, &set[i]);
	return &set[i];
}

static int rc_resize(struct rcache *rc, size_t nslots)
{
	struct rcache old = *rc;
	size_t i;

	rc->slots = calloc(nslots, sizeof(*rc->slots));
	if (!rc->slots) {
		rc->slots = old.slots;
		return -ENOMEM;
	}
	rc->nslots = nslots;
	rc->set_bits = __builtin_ctzl(nslots / RC_WAYS);
	rc->count = 0;
	rc->bytes = nslots * sizeof(*rc->slots);
	for (i = 0; i < old.nslots; i++) {
		struct rc_slot *from = &old.slots[i], *to;

		if (!from->used)
			continue;
		/* A set can overflow after rehashing; that result is just
		 * dropped, as a cache may. */
		to = rc_claim(rc, from->off);
		*to = *from;
		rc->count++;
		rc->bytes += to->nframes * sizeof(*to->frames);
	}
	free(old.slots);
	return 0;
}

static int rc_insert(struct rcache *rc, uint64_t off, const struct sym_frame *frames, int n)
{
	struct sym_frame *copy = NULL;
	struct rc_slot *slot;
	int err;

	if (!rc->nslots || (rc->count + 1 > rc->nslots / 4 * 3 && rc->nslots < RC_MAX_SLOTS)) {
		err = rc_resize(rc, rc->nslots ? rc->nslots * 2 : RC_MIN_SLOTS);
		if (err && !rc->nslots)
			return err;
		/* Else keep going at the old size. */
	}
	if (n) {
		copy = malloc(n * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, frames, n * sizeof(*copy));
	}
	slot = rc_claim(rc, off);
	slot->off = off;
	slot->frames = copy;
	slot->nframes = n;
	slot->used = true;
	rc->count++;
	rc->bytes += n * sizeof(*copy);
	return 0;
}

static void rc_free(struct rcache *rc)
{
	size_t i;

	for (i = 0; i < rc->nslots; i++)
		free(rc->slots[i].frames);
	free(rc->slots);
	memset(rc, 0, sizeof(*rc));
}

/* --- derived strings --- */

static struct str_entry *sm_slot(const struct strmap *m, const char *k1, const char *k2)
{
	size_t mask = m->cap - 1, i = hash64((uintptr_t)k1 ^ hash64((uintptr_t)k2)) & mask;

	while (m->tab[i].k1 && (m->tab[i].k1 != k1 || m->tab[i].k2 != k2))
		i = (i + 1) & mask;
	return &m->tab[i];
}

static int sm_grow(struct strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	struct strmap old = *m;

	m->tab = calloc(cap, sizeof(*m->tab));
	if (!m->tab) {
		m->tab = old.tab;
		return -ENOMEM;
	}
	m->cap = cap;
	m->bytes += (cap - old.cap) * sizeof(*m->tab);
	for (i = 0; i < old.cap; i++)
		if (old.tab[i].k1)
			*sm_slot(m, old.tab[i].k1, old.tab[i].k2) = old.tab[i];
	free(old.tab);
	return 0;
}

/* The entry for (k1, k2); *found tells whether it was there already.
 * NULL when out of memory. */
static struct str_entry *sm_get(struct strmap *m, const char *k1, const char *k2, bool *found)
{
	struct str_entry *e;

	if (m->cap) {
		e = sm_slot(m, k1, k2);
		if (e->k1) {
			*found = true;
			return e;
		}
	}
	if ((m->count + 1) * 2 > m->cap && sm_grow(m))
		return NULL;
	e = sm_slot(m, k1, k2);
	e->k1 = k1;
	e->k2 = k2;
	e->val = NULL;
	m->count++;
	*found = false;
	return e;
}

static void sm_set(struct strmap *m, struct str_entry *e, char *val)
{
	e->val = val;
	if (val)
		m->bytes += strlen(val) + 1;
}

static void sm_free(struct strmap *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->tab[i].val);
	free(m->tab);
	memset(m, 0, sizeof(*m));
}

/* The demangled form of name if it is a C++ symbol and a demangler is
 * available, else name itself.  Out of memory also means name itself. */
static const char *demangle(struct symbolizer *s, struct sym_obj *o, const char *name)
{
	struct str_entry *e;
	int status = -1;
	bool found;
	char *d;

	if (!s->demangle || !name || name[0] != '_' || name[1] != 'Z')
		return name;
	e = sm_get(&o->strs, name, NULL, &found);
	if (!e)
		return name;
	if (!found) {
		d = s->demangle(name, NULL, NULL, &status);
		if (status) {
			free(d);
			d = NULL;
		}
		sm_set(&o->strs, e, d);
	}
	return e->val ? e->val : name;
}

/* libdw joins a line table's file names with their directory entries only,
 * which are often relative to the compilation directory (DWARF 5 from GCC
 * gives "tests/workloads/x.c").  Make them absolute, as addr2line does, so
 * a profile names a file a person can open. */
static const char *source_path(struct sym_obj *o, Dwarf_Die *cudie, const char *file)
{
	Dwarf_Attribute attr;
	struct str_entry *e;
	const char *comp;
	bool found;
	size_t len;
	char *path;

	if (!file || file[0] == '/')
		return file;
	comp = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	if (!comp || comp[0] != '/')
		return file;
	e = sm_get(&o->strs, comp, file, &found);
	if (!e)
		return file;
	if (!found) {
		const char *rel = file;

		while (rel[0] == '.' && rel[1] == '/')
			rel += 2;
		len = strlen(comp) + 1 + strlen(rel) + 1;
		path = malloc(len);
		if (path)
			snprintf(path, len, "%s/%s", comp, rel);
		sm_set(&o->strs, e, path);
	}
	return e->val ? e->val : file;
}

/* --- loading an object --- */

static bool read_uleb(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	unsigned int shift = 0;
	uint64_t r = 0;

	while (*p < end) {
		unsigned char b = *(*p)++;

		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

/*
 * Whether any DIE can be a DW_TAG_inlined_subroutine, answered from the
 * abbreviation tables: a compiler only emits an abbreviation it uses, and
 * .debug_abbrev is a small fraction of .debug_info, so this is far cheaper
 * than walking every DIE.
 */
static bool abbrevs_have_inlines(const unsigned char *p, size_t size)
{
	const unsigned char *end = p + size;
	uint64_t code, tag, name, form, skip;

	while (p < end) {
		if (!read_uleb(&p, end, &code))
			return false;
		if (!code)
			continue; /* end of one unit's table */
		if (!read_uleb(&p, end, &tag) || p >= end)
			return false;
		if (tag == DW_TAG_inlined_subroutine)
			return true;
		p++; /* DW_CHILDREN_yes/no */
		do {
			if (!read_uleb(&p, end, &name) || !read_uleb(&p, end, &form))
				return false;
			/* The SLEB128 value has the same length as a ULEB. */
			if (form == DW_FORM_implicit_const && !read_uleb(&p, end, &skip))
				return false;
		} while (name || form);
	}
	return false;
}

/* Capabilities and size of the DWARF libdwfl found (in the file, through
 * .gnu_debuglink, or by build ID).  Returns the bytes of its sections. */
static size_t scan_dwarf(struct sym_obj *o, Dwarf *dw)
{
	Elf *elf = dwarf_getelf(dw);
	Elf_Scn *scn = NULL;
	size_t shstrndx, bytes = 0;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!name || (strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8)))
			continue;
		bytes += shdr.sh_size;
		if (!shdr.sh_size)
			continue;
		if (!strcmp(name, ".debug_info")) {
			o->info.has_functions = true;
		} else if (!strcmp(name, ".debug_line")) {
			o->info.has_filenames = true;
			o->info.has_line_numbers = true;
		} else if (!strcmp(name, ".debug_abbrev") && !o->info.has_inline_frames) {
			/* libdw has already decompressed the sections it uses;
			 * anything still compressed is left unanswered. */
			data = elf_getdata(scn, NULL);
			if (data && data->d_buf && !(shdr.sh_flags & SHF_COMPRESSED))
				o->info.has_inline_frames =
				    abbrevs_have_inlines(data->d_buf, data->d_size);
		}
	}
	return bytes;
}

static int load_segments(struct sym_obj *o, Elf *elf)
{
	size_t phnum, i;

	if (elf_getphdrnum(elf, &phnum))
		return -ENOEXEC;
	if (!phnum)
		return 0;
	o->segs = calloc(phnum, sizeof(*o->segs));
	if (!o->segs)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(elf, i, &phdr))
			return -ENOEXEC;
		if (phdr.p_type != PT_LOAD || !phdr.p_filesz)
			continue;
		o->segs[o->nsegs].off = phdr.p_offset;
		o->segs[o->nsegs].filesz = phdr.p_filesz;
		o->segs[o->nsegs].vaddr = phdr.p_vaddr;
		o->nsegs++;
	}
	return 0;
}

static int load_build_id(struct sym_obj *o)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len, i;

	len = dwfl_module_build_id(o->mod, &bits, &vaddr);
	if (len <= 0)
		return 0;
	o->build_id = malloc(2 * len + 1);
	if (!o->build_id)
		return -ENOMEM;
	for (i = 0; i < len; i++) {
		o->build_id[2 * i] = hex[bits[i] >> 4];
		o->build_id[2 * i + 1] = hex[bits[i] & 0xf];
	}
	o->build_id[2 * len] = '\0';
	return 0;
}

/* Defined functions in .symtab or .dynsym: a stripped executable's .dynsym
 * holds only imports, which name nothing in the file.  *nsyms gets the size
 * of the table libdwfl keeps. */
static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Among aliases, the preferred name first. */
	return (y->rank > x->rank) - (y->rank < x->rank);
}

static int count_functions(struct sym_obj *o, int *nsyms)
{
	int i, n = 0;

	*nsyms = dwfl_module_getsymtab(o->mod);
	if (*nsyms < 0) {
		*nsyms = 0;
		dwfl_errno();
	}
	o->fsyms = calloc(*nsyms ? *nsyms : 1, sizeof(*o->fsyms));
	if (!o->fsyms)
		return -ENOMEM;
	for (i = 0; i < *nsyms; i++) {
		GElf_Word shndx;
		GElf_Addr addr;
		GElf_Sym sym;
		const char *name;
		int type, bind;

		name = dwfl_module_getsym_info(o->mod, i, &sym, &addr, &shndx, NULL, NULL);
		if (!name || !*name)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if ((type == STT_FUNC || type == STT_GNU_IFUNC) && shndx != SHN_UNDEF) {
			o->fsyms[n++] = (struct fsym){addr, sym.st_size, name,
						      bind == STB_GLOBAL ? 2 : bind == STB_WEAK};
		}
	}
	qsort(o->fsyms, n, sizeof(*o->fsyms), fsym_cmp);
	o->nfsyms = n;
	return n;
}

/*
 * libelf checks only what it is asked to read, so a file cut short (copied
 * while still being written, say) would pass for a stripped one and answer
 * "nothing known" for every address.  Everything the headers describe must
 * lie inside the file.
 */
static int check_complete(Elf *elf, const GElf_Ehdr *ehdr, uint64_t size)
{
	Elf_Scn *scn = NULL;
	size_t n, i;

	if (ehdr->e_shoff) {
		if (elf_getshdrnum(elf, &n) || !ehdr->e_shentsize || ehdr->e_shoff > size ||
		    (size - ehdr->e_shoff) / ehdr->e_shentsize < (n ? n : 1))
			return -ENOEXEC;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr shdr;

			if (!gelf_getshdr(scn, &shdr))
				return -ENOEXEC;
			if (shdr.sh_type != SHT_NOBITS &&
			    (shdr.sh_offset > size || shdr.sh_size > size - shdr.sh_offset))
				return -ENOEXEC;
		}
	}
	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(elf, i, &phdr))
			return -ENOEXEC;
		if (phdr.p_offset > size || phdr.p_filesz > size - phdr.p_offset)
			return -ENOEXEC;
	}
	return 0;
}

/* Takes ownership of fd; size is the file's. */
static int obj_load(struct sym_obj *o, const char *path, int fd, uint64_t size)
{
	unsigned char ident[EI_NIDENT];
	Dwarf_Addr bias;
	GElf_Ehdr ehdr;
	Elf *elf;
	int err, nsyms;

	if (pread(fd, ident, sizeof(ident), 0) != sizeof(ident) || memcmp(ident, ELFMAG, SELFMAG)) {
		close(fd);
		return -ENOEXEC;
	}
	o->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!o->dwfl) {
		close(fd);
		return -ENOMEM;
	}
	dwfl_report_begin(o->dwfl);
	/* Base 0 with add_p_vaddr: the module starts at its first PT_LOAD's
	 * p_vaddr and has bias 0, for ET_DYN as for ET_EXEC (where libdwfl
	 * ignores the base anyway), so dwfl addresses == ELF vaddrs. */
	o->mod = dwfl_report_elf(o->dwfl, path, path, fd, 0, true);
	if (!o->mod) {
		/* libdwfl keeps fd only on success.  Its error codes aren't
		 * public; the magic was right, so the file is bad ELF. */
		close(fd);
		dwfl_errno();
		return -ENOEXEC;
	}
	if (dwfl_report_end(o->dwfl, NULL, NULL))
		return -ENOMEM;

	elf = dwfl_module_getelf(o->mod, &bias);
	if (!elf || !gelf_getehdr(elf, &ehdr))
		return -ENOEXEC;
	if (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN)
		return -ENOEXEC;
	err = check_complete(elf, &ehdr, size);
	if (err)
		return err;
	err = load_segments(o, elf);
	if (err)
		return err;
	err = load_build_id(o);
	if (err)
		return err;

	o->info.has_functions = count_functions(o, &nsyms) > 0;
	o->base_bytes = OBJ_BASE_BYTES + sizeof(*o) + o->nsegs * sizeof(*o->segs) +
			(o->build_id ? strlen(o->build_id) + 1 : 0) + (size_t)nsyms * SYM_BYTES;

	return 0;
}

static void account(struct symbolizer *s, struct sym_obj *o);

/*
 * DWARF (the object's own or separate debug info) is loaded on the first
 * call that needs it, not at open: decompressing libc6-dbg's sections takes
 * ~50 ms, and the sampler opens objects on its hot path only to read
 * .eh_frame (symbolizer__ret_offset).
 */
static void obj_load_dwarf(struct symbolizer *s, struct sym_obj *o)
{
	Dwarf_Addr bias;
	Dwarf *dw;

	if (o->dwarf_loaded || o->err)
		return;
	o->dwarf_loaded = true;
	dw = dwfl_module_getdwarf(o->mod, &bias);
	if (dw)
		o->base_bytes += scan_dwarf(o, dw);
	else
		dwfl_errno(); /* no DWARF is not an error */
	account(s, o);
}

static void obj_free(struct sym_obj *o)
{
	if (!o)
		return;
	rc_free(&o->rc);
	sm_free(&o->strs);
	if (o->dwfl)
		dwfl_end(o->dwfl); /* closes the fds it owns */
	free(o->segs);
	free(o->build_id);
	free(o->fsyms);
	free(o);
}

/* Drop everything a failed load left and keep just the error. */
static void obj_make_negative(struct sym_obj *o, int err)
{
	rc_free(&o->rc);
	sm_free(&o->strs);
	if (o->dwfl)
		dwfl_end(o->dwfl);
	free(o->segs);
	free(o->build_id);
	o->dwfl = NULL;
	o->mod = NULL;
	o->segs = NULL;
	o->nsegs = 0;
	o->build_id = NULL;
	memset(&o->info, 0, sizeof(o->info));
	o->err = err;
	o->base_bytes = sizeof(*o);
}

static int obj_open(const char *path, uint64_t dev, uint64_t ino, struct sym_obj **out)
{
	struct sym_obj *o;
	struct stat st;
	int fd, err;

	*out = NULL;
	/* O_NONBLOCK: a FIFO passed as a path must not hang the daemon. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if ((uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino) {
		/* The path now names another file than the mapped one. */
		close(fd);
		return -ESTALE;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC;
	}
	o = calloc(1, sizeof(*o));
	if (!o) {
		close(fd);
		return -ENOMEM;
	}
	o->dev = dev;
	o->ino = ino;
	err = obj_load(o, path, fd, st.st_size);
	if (err == -ENOEXEC) {
		obj_make_negative(o, err);
	} else if (err) {
		obj_free(o);
		return err;
	}
	*out = o;
	return 0;
}

/* --- the object cache --- */

static size_t obj_hash(uint64_t dev, uint64_t ino)
{
	return hash64(ino ^ hash64(dev));
}

static struct sym_obj *tab_find(const struct symbolizer *s, uint64_t dev, uint64_t ino)
{
	struct sym_obj *o;

	if (!s->tab_cap)
		return NULL;
	for (o = s->tab[obj_hash(dev, ino) & (s->tab_cap - 1)]; o; o = o->hnext)
		if (o->dev == dev && o->ino == ino)
			return o;
	return NULL;
}

static int tab_insert(struct symbolizer *s, struct sym_obj *o)
{
	size_t i;

	if (s->nobjs + 1 > s->tab_cap) {
		size_t cap = s->tab_cap ? s->tab_cap * 2 : 64;
		struct sym_obj **tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return -ENOMEM;
		for (i = 0; i < s->tab_cap; i++) {
			while (s->tab[i]) {
				struct sym_obj *n = s->tab[i];
				size_t b = obj_hash(n->dev, n->ino) & (cap - 1);

				s->tab[i] = n->hnext;
				n->hnext = tab[b];
				tab[b] = n;
			}
		}
		free(s->tab);
		s->tab = tab;
		s->tab_cap = cap;
	}
	i = obj_hash(o->dev, o->ino) & (s->tab_cap - 1);
	o->hnext = s->tab[i];
	s->tab[i] = o;
	s->nobjs++;
	return 0;
}

static void tab_remove(struct symbolizer *s, struct sym_obj *o)
{
	struct sym_obj **pp = &s->tab[obj_hash(o->dev, o->ino) & (s->tab_cap - 1)];

	while (*pp != o)
		pp = &(*pp)->hnext;
	*pp = o->hnext;
	s->nobjs--;
}

static void lru_unlink(struct sym_obj *o)
{
	o->prev->next = o->next;
	o->next->prev = o->prev;
}

static void lru_push(struct symbolizer *s, struct sym_obj *o)
{
	o->prev = &s->lru;
	o->next = s->lru.next;
	s->lru.next->prev = o;
	s->lru.next = o;
}

/* Bring symbolizer.bytes up to date with what o holds now. */
static void account(struct symbolizer *s, struct sym_obj *o)
{
	size_t now = o->base_bytes + o->rc.bytes + o->strs.bytes;

	s->bytes = s->bytes - o->bytes + now;
	o->bytes = now;
}

/* Evict least recently used objects until under budget, but never keep, the
 * one the current call uses: the strings it returns must stay valid.  keep
 * is always the newest, so everything else goes first. */
static void evict(struct symbolizer *s, struct sym_obj *keep)
{
	while (s->bytes > s->max_bytes) {
		struct sym_obj *o = s->lru.prev;

		if (o == &s->lru || o == keep)
			break;
		lru_unlink(o);
		tab_remove(s, o);
		s->bytes -= o->bytes;
		obj_free(o);
	}
}

/* The cache entry for key, loaded if needed and made the newest.  Returns
 * the entry's error for a cached unusable object. */
static int get_object(struct symbolizer *s, const struct sym_object_key *key, struct sym_obj **out)
{
	uint64_t dev, ino;
	struct sym_obj *o;
	int err;

	*out = NULL;
	if (!s || !key || !key->path)
		return -EINVAL;
	dev = key->dev;
	ino = key->ino;
	if (!dev && !ino) {
		/* No identity given: take the path's current one, so the
		 * entry is still shared with callers that pass dev/ino. */
		struct stat st;

		if (stat(key->path, &st))
			return -errno;
		dev = st.st_dev;
		ino = st.st_ino;
	}
	o = tab_find(s, dev, ino);
	if (o) {
		lru_unlink(o);
	} else {
		err = obj_open(key->path, dev, ino, &o);
		if (err)
			return err;
		err = tab_insert(s, o);
		if (err) {
			obj_free(o);
			return err;
		}
	}
	lru_push(s, o);
	account(s, o);
	evict(s, o);
	*out = o;
	return o->err;
}

/* --- resolving --- */

static bool offset_to_vaddr(const struct sym_obj *o, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < o->nsegs; i++) {
		const struct seg *sg = &o->segs[i];

		if (off >= sg->off && off - sg->off < sg->filesz) {
			*vaddr = off - sg->off + sg->vaddr;
			return true;
		}
	}
	return false;
}

/* A DIE's function name: the demangled linkage name when we can demangle,
 * else DW_AT_name (both followed through abstract origins and
 * specifications by dwarf_attr_integrate), else the raw linkage name. */
static const char *die_name(struct symbolizer *s, struct sym_obj *o, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *linkage, *name;

	linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!linkage)
		linkage =
		    dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (linkage) {
		name = demangle(s, o, linkage);
		if (name != linkage)
			return name;
	}
	name = dwarf_diename(die);
	return name ? name : linkage;
}

/*
 * The function symbol holding vaddr: among the symbols at the nearest
 * start at or below it, one whose size covers it, or one of size zero
 * (which covers up to the next symbol, as libdwfl reads them).
 */
static const char *symbol_name(struct symbolizer *s, struct sym_obj *o, uint64_t vaddr)
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
			return demangle(s, o, f->name);	/* f: the preferred alias */
	}
	return NULL;
}

/*
 * Frames from DWARF scopes, innermost first.  The innermost frame gets the
 * line table's file:line at pc; each outer one gets the call site recorded
 * on the inlined_subroutine it contains.  Returns 0 if pc is in no function
 * DWARF knows (the caller falls back to the symbol table).
 */
static int dwarf_frames(struct symbolizer *s, struct sym_obj *o, uint64_t vaddr,
			struct sym_frame *fr)
{
	Dwarf_Die *cudie, *scopes = NULL, inner;
	Dwarf_Files *files = NULL;
	Dwarf_Addr bias, pc;
	const char *file = NULL;
	int nscopes, i, n = 0, line = 0;
	Dwarf_Line *dl;

	cudie = dwfl_module_addrdie(o->mod, vaddr, &bias);
	if (!cudie) {
		dwfl_errno(); /* no DWARF here: symbols only */
		goto out;
	}
	pc = vaddr - bias;
	dl = dwarf_getsrc_die(cudie, pc);
	if (dl) {
		file = source_path(o, cudie, dwarf_linesrc(dl, NULL, NULL));
		dwarf_lineno(dl, &line);
	}

	/* dwarf_getscopes finds the innermost scope at pc, but past an
	 * inlined instance it continues into the abstract definition's
	 * scopes; the physical nesting comes from dwarf_getscopes_die on
	 * that innermost DIE (as eu-addr2line -i does). */
	nscopes = dwarf_getscopes(cudie, pc, &scopes);
	if (nscopes <= 0)
		goto out;
	inner = scopes[0];
	free(scopes);
	scopes = NULL;
	nscopes = dwarf_getscopes_die(&inner, &scopes);

	for (i = 0; i < nscopes; i++) {
		Dwarf_Die *die = &scopes[i];
		int tag = dwarf_tag(die), idx;
		Dwarf_Attribute attr;
		Dwarf_Word val;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram &&
		    tag != DW_TAG_entry_point)
			continue;
		/* Deeper inlining than fits keeps the innermost frames and
		 * the physical function, which overwrites the last slot. */
		idx = n < SYM_MAX_FRAMES ? n++ : SYM_MAX_FRAMES - 1;
		fr[idx].function = die_name(s, o, die);
		fr[idx].file = file;
		fr[idx].line = line;
		if (tag != DW_TAG_inlined_subroutine)
			break;

		/* The frame that contains this inline is at its call site. */
		file = NULL;
		line = 0;
		if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &val) &&
		    (files || !dwarf_getsrcfiles(cudie, &files, NULL)))
			file = source_path(o, cudie, dwarf_filesrc(files, val, NULL, NULL));
		if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &val))
			line = val;
	}
	/* A function without a name in DWARF (rare, e.g. some assembly):
	 * the symbol table may still know it. */
	if (n && !fr[n - 1].function)
		fr[n - 1].function = symbol_name(s, o, vaddr);
out:
	free(scopes);
	if (!n) {
		/* Outside any subprogram but maybe still in the line table
		 * (assembly with line info): name from the symbols. */
		fr[0].function = symbol_name(s, o, vaddr);
		fr[0].file = file;
		fr[0].line = line;
		n = fr[0].function || file ? 1 : 0;
	}
	return n;
}

static int symbolize(struct symbolizer *s, struct sym_obj *o, uint64_t off, struct sym_frame *fr)
{
	uint64_t vaddr;

	if (!offset_to_vaddr(o, off, &vaddr))
		return 0;
	return dwarf_frames(s, o, vaddr, fr);
}

/* --- public API --- */

struct symbolizer *symbolizer__new(size_t max_bytes)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->max_bytes = max_bytes;
	s->lru.next = s->lru.prev = &s->lru;
	s->demangle = __cxa_demangle;
	if (!s->demangle)
		s->demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	while (s->lru.next != &s->lru) {
		struct sym_obj *o = s->lru.next;

		lru_unlink(o);
		obj_free(o);
	}
	free(s->tab);
	ksyms__free(s->ksyms);
	free(s);
}

int symbolizer__object_info(struct symbolizer *s, const struct sym_object_key *key,
			    struct sym_object_info *info)
{
	struct sym_obj *o;
	int err;

	err = get_object(s, key, &o);
	if (err)
		return err;
	obj_load_dwarf(s, o);
	evict(s, o);
	*info = o->info;
	info->build_id = o->build_id;
	return 0;
}

int symbolizer__resolve(struct symbolizer *s, const struct sym_object_key *key,
			uint64_t file_offset, struct sym_result *res)
{
	struct sym_frame frames[SYM_MAX_FRAMES];
	struct rc_slot *slot;
	struct sym_obj *o;
	int err, n;

	res->nframes = 0;
	err = get_object(s, key, &o);
	if (err)
		return err;
	slot = rc_find(&o->rc, file_offset);
	if (slot) {
		if (slot->nframes)
			memcpy(res->frames, slot->frames, slot->nframes * sizeof(*slot->frames));
		res->nframes = slot->nframes;
		return 0;
	}

	obj_load_dwarf(s, o);
	n = symbolize(s, o, file_offset, frames);
	memcpy(res->frames, frames, n * sizeof(*frames));
	res->nframes = n;
	/* Out of memory only costs the caching; the answer is still right. */
	rc_insert(&o->rc, file_offset, frames, n);
	account(s, o);
	evict(s, o);
	return 0;
}

/* The DWARF number of the stack pointer, which CFI names in the CFA rule. */
#if defined(__x86_64__)
#define SP_REGNO 7
#elif defined(__aarch64__)
#define SP_REGNO 31
#elif defined(__i386__)
#define SP_REGNO 4
#else
#define SP_REGNO -1
#endif

/* The stack-pointer offset of the return address in one CFI row: the CFA
 * must be SP + a, and the return address saved at CFA + b. */
static int frame_ret_offset(Dwarf_Frame *frame, int *sp_offset)
{
	Dwarf_Op ops_mem[3], *ops;
	int64_t cfa_off, ra_off = 0;
	size_t nops;
	int ra;

	ra = dwarf_frame_info(frame, NULL, NULL, NULL);
	if (ra < 0)
		return -ENOENT;
	if (dwarf_frame_cfa(frame, &ops, &nops) || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    ops[0].number != (Dwarf_Word)SP_REGNO)
		return -ENOENT;
	cfa_off = (int64_t)ops[0].number2;
	/* "offset(N)" comes back as DW_OP_call_frame_cfa [DW_OP_plus_uconst N]
	 * with N two's complement; a return address kept in a register (LR
	 * on arm64 before it is spilled) isn't on the stack at all. */
	if (dwarf_frame_register(frame, ra, ops_mem, &ops, &nops) || !ops || nops < 1 || nops > 2 ||
	    ops[0].atom != DW_OP_call_frame_cfa)
		return -ENOENT;
	if (nops == 2) {
		if (ops[1].atom != DW_OP_plus_uconst)
			return -ENOENT;
		ra_off = (int64_t)ops[1].number;
	}
	if (cfa_off + ra_off < 0 || cfa_off + ra_off > INT_MAX)
		return -ENOENT;
	*sp_offset = (int)(cfa_off + ra_off);
	return 0;
}

int symbolizer__ret_offset(struct symbolizer *s, const struct sym_object_key *key,
			   uint64_t file_offset, int *sp_offset)
{
	Dwarf_CFI *cfis[2];
	Dwarf_Addr biases[2] = {0, 0};
	struct sym_obj *o;
	uint64_t vaddr;
	int err, i;

	err = get_object(s, key, &o);
	if (err)
		return err;
	if (SP_REGNO < 0 || !offset_to_vaddr(o, file_offset, &vaddr))
		return -ENOENT;
	/* .eh_frame is what the unwinder itself uses and is in every
	 * stripped binary; .debug_frame is the fallback. */
	cfis[0] = dwfl_module_eh_cfi(o->mod, &biases[0]);
	/* .debug_frame only if DWARF is loaded already: see obj_load_dwarf. */
	cfis[1] = o->dwarf_loaded ? dwfl_module_dwarf_cfi(o->mod, &biases[1]) : NULL;
	for (i = 0; i < 2; i++) {
		Dwarf_Frame *frame = NULL;

		if (!cfis[i] || dwarf_cfi_addrframe(cfis[i], vaddr - biases[i], &frame))
			continue;
		err = frame_ret_offset(frame, sp_offset);
		free(frame);
		return err;
	}
	dwfl_errno();
	return -ENOENT;
}

/* kallsyms is read once.  A failure that won't go away (no permission, no
 * file) is remembered; anything else is retried on the next call. */
static int kernel_load(struct symbolizer *s)
{
	int err;

	if (s->ksyms)
		return 0;
	if (s->ksyms_err)
		return s->ksyms_err;
	err = ksyms__load("/proc/kallsyms", &s->ksyms);
	if (err == -EPERM || err == -EACCES || err == -ENOENT)
		s->ksyms_err = err;
	return err;
}

int symbolizer__resolve_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *res)
{
	const char *name;
	int err;

	res->nframes = 0;
	if (!s)
		return -EINVAL;
	err = kernel_load(s);
	if (err)
		return err;
	name = ksyms__find(s->ksyms, addr);
	if (name) {
		res->frames[0].function = name;
		res->frames[0].file = NULL;
		res->frames[0].line = 0;
		res->nframes = 1;
	}
	return 0;
}

int symbolizer__kernel_range(struct symbolizer *s, uint64_t *start, uint64_t *limit)
{
	int err;

	if (!s)
		return -EINVAL;
	err = kernel_load(s);
	if (err)
		return err;
	ksyms__range(s->ksyms, start, limit);
	return 0;
}

size_t symbolizer__cache_bytes(const struct symbolizer *s)
{
	if (!s)
		return 0;
	return s->bytes + s->tab_cap * sizeof(*s->tab) + ksyms__bytes(s->ksyms);
}

size_t symbolizer__cache_objects(const struct symbolizer *s)
{
	return s ? s->nobjs : 0;
}
