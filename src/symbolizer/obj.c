// SPDX-License-Identifier: BSD-2-Clause
/*
 * Opening an ELF object for the symbolizer: the main file read with
 * pread, its debug file found without ever blocking, its segments, build
 * ID and function symbols.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/mapped_file.h"
#include "symbolizer/elf.h"
#include "symbolizer/obj.h"

/* What an object costs besides its DWARF and symbols: the Dwfl, the module,
 * libelf's descriptors and our own struct.  A guess, used so that even
 * objects without debug info count for something against max_bytes. */
#define OBJ_BASE_BYTES 8192
/*
 * What a file that is read rather than mapped (one a user other than root
 * can change) may make the daemon read into memory: its symbol and string
 * tables and notes, then its DWARF.  A file can state any section size
 * without holding the bytes (a 600 MiB string table in a 20 KB sparse file,
 * a small stream that inflates 1000 times), and libelf reads a section
 * whole.  Over the first, the object is refused (-EFBIG, remembered like a
 * file that is not ELF); over the second, it is symbolized without DWARF.
 * Half the default max_memory_mb each: no one object can take the daemon
 * past it.  A file only root can change is mapped, and costs pages.
 */
#define OBJ_READ_MAX (64ull << 20)
#define OBJ_DWARF_READ_MAX (64ull << 20)
/* What libdwfl keeps per symbol once asked for the table (its index of
 * the table's sections, the names it has looked at): a guess. */
#define SYM_BYTES 8
#define STALE_CHECK_NS 100000000ll

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* libdwfl's find_elf: the Elf we opened ourselves (see obj_load). */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct sym_obj *o = *userdata;
	int fd;

	if (!o || !o->handoff_elf)
		return -1;
	*elfp = o->handoff_elf;
	*file_name = strdup(o->path);
	fd = o->handoff_fd;
	o->handoff_elf = NULL;
	o->handoff_fd = -1;
	return fd;	/* libdwfl owns both now */
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = obj__find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* ---- loading ---- */

/*
 * Capabilities and size of the DWARF libdwfl found.  Returns the bytes of
 * its sections.
 */
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

static int load_segments(struct sym_obj *o, Elf *elf, uint64_t *lo, uint64_t *hi)
{
	size_t phnum, i;

	*lo = UINT64_MAX;
	*hi = 0;
	if (elf_getphdrnum(elf, &phnum))
		return -ENOEXEC;
	o->segs = calloc(phnum ? phnum : 1, sizeof(*o->segs));
	if (!o->segs)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(elf, i, &phdr))
			return -ENOEXEC;
		if (phdr.p_type != PT_LOAD)
			continue;
		/* libdwfl puts a module's start at its first PT_LOAD, aligned
		 * down: reported there, the bias is 0 and dwfl addresses are
		 * the ELF's own. */
		if (*lo == UINT64_MAX)
			*lo = phdr.p_align > 1 ? phdr.p_vaddr & -phdr.p_align : phdr.p_vaddr;
		if (phdr.p_vaddr + phdr.p_memsz > *hi)
			*hi = phdr.p_vaddr + phdr.p_memsz;
		if (!phdr.p_filesz)
			continue;
		o->segs[o->nsegs].off = phdr.p_offset;
		o->segs[o->nsegs].filesz = phdr.p_filesz;
		o->segs[o->nsegs].vaddr = phdr.p_vaddr;
		o->nsegs++;
	}
	if (*lo == UINT64_MAX || *hi <= *lo)
		return -ENOEXEC;
	return 0;
}

static int set_build_id(struct sym_obj *o, const unsigned char *bits, size_t len)
{
	static const char hex[] = "0123456789abcdef";

	if (!len)
		return 0;
	o->build_id_bits = malloc(len);
	o->build_id = malloc(2 * len + 1);
	if (!o->build_id || !o->build_id_bits)
		return -ENOMEM;
	memcpy(o->build_id_bits, bits, len);
	o->build_id_len = len;
	for (size_t i = 0; i < len; i++) {
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

/*
 * The defined functions of the symbol table libdwfl found (the file's, or
 * its debug file's: asking is what makes libdwfl look for one, and
 * debuginfod fetch one), sorted, in an array of their own.  Without
 * `keep` (a cache that only unwinds), just asked for.
 */
static int count_functions(struct sym_obj *o, bool keep, int *nsyms)
{
	struct fsym *fit;
	int i, n = 0;

	*nsyms = dwfl_module_getsymtab(o->mod);
	if (*nsyms < 0) {
		*nsyms = 0;
		dwfl_errno();
	}
	if (!keep)
		return *nsyms;
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
		/* And code that assembly exports with a size but no type:
		 * arm64's vDSO __kernel_rt_sigreturn (SYM_CODE_START), where
		 * every signal handler returns.  Mapping symbols ($x, $d) are
		 * local and sizeless; a data symbol never covers code. */
		if ((type == STT_FUNC || type == STT_GNU_IFUNC ||
		     (type == STT_NOTYPE && sym.st_size && bind != STB_LOCAL)) &&
		    shndx != SHN_UNDEF) {
			o->fsyms[n++] = (struct fsym){addr, sym.st_size, name,
						      bind == STB_GLOBAL ? 2 : bind == STB_WEAK};
		}
	}
	/* Objects, sections and files are often half the table: their room
	 * goes back. */
	fit = n < *nsyms ? realloc(o->fsyms, (n ? n : 1) * sizeof(*o->fsyms)) : NULL;
	if (fit)
		o->fsyms = fit;
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

/* Our own mapping of elf's file (dev, ino), if libelf mapped it. */
static size_t own_map(Elf *elf, uint64_t dev, uint64_t ino, void **map)
{
	char *ident = elf ? elf_getident(elf, NULL) : NULL;
	size_t len = ident ? mapped_file__own_map(ident, dev, ino) : 0;

	*map = len ? ident : NULL;
	return len;
}

void obj__release_pages(struct sym_obj *o)
{
	if (o->map_len && !o->main_compressed)
		madvise(o->map, o->map_len, MADV_DONTNEED);
	if (o->dbg_map_len && !o->dbg_compressed)
		madvise(o->dbg_map, o->dbg_map_len, MADV_DONTNEED);
}

static int obj_load(struct sym_obj *o, uint64_t size)
{
	unsigned char ident[EI_NIDENT], bits[64];
	uint64_t lo, hi;
	void **userdata;
	Dwarf_Addr bias;
	GElf_Ehdr ehdr;
	Elf *elf;
	int err, nsyms;

	if (pread(o->handoff_fd, ident, sizeof(ident), 0) != sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG))
		return -ENOEXEC;
	/* Mapped when only root can change the file: its DWARF then costs
	 * the pages read, reclaimable, not a heap copy of every section
	 * touched.  Read otherwise: another user could truncate it under
	 * the mapping.  (libdwfl maps the debug files it opens itself.) */
	o->mapped = mapped_file__root_only(o->handoff_fd);
	elf = elf_begin(o->handoff_fd, o->mapped ? ELF_C_READ_MMAP : ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	o->handoff_elf = elf;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) ||
	    (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN))
		return -ENOEXEC;
	err = check_complete(elf, &ehdr, size);
	if (!err && !o->mapped) {
		uint64_t need = elf__read_size(elf, o->handoff_fd, ELF_READ_SYMS);

		if (need > OBJ_READ_MAX) {
			log__warn("%s: its symbol tables and notes would take %llu MiB in memory, "
				  "over %llu: left unsymbolized", o->path,
				  (unsigned long long)(need >> 20), OBJ_READ_MAX >> 20);
			return -EFBIG;
		}
		o->read_bytes = need;
	}
	err = err ?: elf__check_strtabs(elf);
	if (!err)
		o->main_compressed = elf__has_compressed(elf);
	err = err ?: load_segments(o, elf, &lo, &hi);
	err = err ?: set_build_id(o, bits, elf__read_build_id(elf, bits, sizeof(bits)));
	if (err)
		return err;

	o->dwfl = dwfl_begin(&callbacks);
	if (!o->dwfl)
		return -ENOMEM;
	dwfl_report_begin(o->dwfl);
	o->mod = dwfl_report_module(o->dwfl, o->path, lo, hi);
	if (!o->mod || dwfl_report_end(o->dwfl, NULL, NULL)) {
		dwfl_errno();
		return -ENOMEM;
	}
	dwfl_module_info(o->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = o;
	/* Hands our Elf and fd to libdwfl (find_elf). */
	if (!dwfl_module_getelf(o->mod, &bias) || bias) {
		dwfl_errno();
		return -ENOEXEC;
	}
	o->info.has_functions = count_functions(o, o->symbols, &nsyms) > 0;
	if (o->mapped) {
		struct stat st;

		if (fstat(o->fd, &st) == 0)
			o->map_len = own_map(dwfl_module_getelf(o->mod, &bias), st.st_dev,
					     st.st_ino, &o->map);
	}
	o->base_bytes = OBJ_BASE_BYTES + sizeof(*o) + o->nsegs * sizeof(*o->segs) +
			(o->build_id ? 3 * o->build_id_len + 1 : 0) +
			o->nfsyms * sizeof(*o->fsyms) + (size_t)nsyms * SYM_BYTES + o->read_bytes;
	return 0;
}

size_t obj__load_dwarf(struct sym_obj *o)
{
	Dwarf_Addr bias;
	Dwarf *dw;
	size_t bytes = 0;

	if (o->dwarf_loaded || o->err)
		return 0;
	o->dwarf_loaded = true;
	if (!o->mapped) {
		Elf *elf = dwfl_module_getelf(o->mod, &bias);
		uint64_t need = elf ? elf__read_size(elf, o->fd, ELF_READ_DWARF) : 0;

		if (need > OBJ_DWARF_READ_MAX) {
			log__warn("%s: its DWARF would take %llu MiB in memory, over %llu: "
				  "symbolized without it", o->path, (unsigned long long)(need >> 20),
				  OBJ_DWARF_READ_MAX >> 20);
			o->dwarf_refused = true;
			return 0;
		}
	}
	dw = dwfl_module_getdwarf(o->mod, &bias);
	if (dw)
		bytes = scan_dwarf(o, dw);
	else
		dwfl_errno(); /* no DWARF is not an error */
	if (dw && o->dbg_ino && !o->dbg_map_len && dwarf_getelf(dw) != dwfl_module_getelf(o->mod, &bias))
		o->dbg_map_len = own_map(dwarf_getelf(dw), o->dbg_dev, o->dbg_ino, &o->dbg_map);
	o->base_bytes += bytes;
	return bytes;
}

bool obj__vaddr(const struct sym_obj *o, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < o->nsegs; i++) {
		const struct seg *sg = &o->segs[i];

		if (off >= sg->off && off - sg->off < sg->filesz) {
			*vaddr = off - sg->off + sg->vaddr;
			return true;
		}
	}
	return false;
}

/* Drop everything a failed load left and keep just the error. */
static void obj_make_negative(struct sym_obj *o, int err)
{
	rc__free(&o->rc);
	strmap__free(&o->strs);
	scopes__free(&o->scopes);
	lines__free(&o->lines);
	if (o->dwfl)
		dwfl_end(o->dwfl);	/* closes the debug file, and with it its copy */
	obj__scratch_release(o);
	if (o->handoff_elf)
		elf_end(o->handoff_elf);
	if (o->handoff_fd >= 0)
		close(o->handoff_fd);
	free(o->segs);
	free(o->build_id);
	free(o->build_id_bits);
	free(o->fsyms);
	o->dwfl = NULL;
	o->mod = NULL;
	o->handoff_elf = NULL;
	o->handoff_fd = -1;
	o->segs = NULL;
	o->nsegs = 0;
	o->build_id = NULL;
	o->build_id_bits = NULL;
	o->build_id_len = 0;
	o->fsyms = NULL;
	o->nfsyms = 0;
	o->map = o->dbg_map = NULL;	/* dwfl_end unmapped them */
	o->map_len = o->dbg_map_len = 0;
	memset(&o->info, 0, sizeof(o->info));
	o->dbgd_wait = false;	/* nothing left to look up symbols in */
	o->err = err;
	o->base_bytes = sizeof(*o);
}

void obj__free(struct sym_obj *o)
{
	if (!o)
		return;
	obj_make_negative(o, 0);
	if (o->fd >= 0)
		close(o->fd);
	free(o->path);
	free(o);
}

int obj__open(const struct sym_object_key *key, struct debuginfod *dbgd, bool symbols,
	      struct sym_obj **out)
{
	struct mapped_file mf = {key->pid, key->start, key->end, key->path, key->dev, key->ino};
	struct sym_obj *o;
	struct stat st;
	int fd, err;

	*out = NULL;
	/* libelf refuses to work until told its version (idempotent). */
	elf_version(EV_CURRENT);
	fd = mapped_file__open(&mf);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	o = calloc(1, sizeof(*o));
	if (o)
		o->path = strdup(key->path);
	if (!o || !o->path) {
		free(o);
		close(fd);
		return -ENOMEM;
	}
	o->dev = key->dev;
	o->ino = key->ino;
	o->pid = key->pid;
	o->owner_uid = st.st_uid;
	o->owner_gid = st.st_gid;
	if (key->pid > 0) {
		char proc[32];
		struct stat ps;

		snprintf(proc, sizeof(proc), "/proc/%d", key->pid);
		if (stat(proc, &ps) == 0) {
			o->owner_uid = ps.st_uid;
			o->owner_gid = ps.st_gid;
		}
	}
	o->dbgd = dbgd;
	o->symbols = symbols;
	o->fd = fd;
	o->size = st.st_size;
	o->mtime_ns = ts_ns(&st.st_mtim);
	o->ctime_ns = ts_ns(&st.st_ctim);
	o->checked_ns = clock__mono_ns();
	/* libdwfl takes a descriptor of its own; ours stays for obj__stale(). */
	o->handoff_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (o->handoff_fd < 0) {
		obj__free(o);
		return -EMFILE;
	}
	err = obj_load(o, st.st_size);
	if (err == -ENOEXEC || err == -EFBIG) {
		obj_make_negative(o, err);
	} else if (err) {
		obj__free(o);
		return err;
	}
	*out = o;
	return 0;
}

bool obj__stale(struct sym_obj *o, int64_t now_ns)
{
	struct stat st;

	if (now_ns - o->checked_ns < STALE_CHECK_NS)
		return false;
	o->checked_ns = now_ns;
	if (fstat(o->fd, &st))
		return true;
	return st.st_size != o->size || ts_ns(&st.st_mtim) != o->mtime_ns ||
	       ts_ns(&st.st_ctim) != o->ctime_ns;
}
