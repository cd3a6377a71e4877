/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * obj: one ELF object of the symbolizer's cache (internal to symbolizer/).
 * obj.c opens and loads it; frames.c answers questions about addresses in
 * it; symbolizer.c keeps objects in a bounded cache by identity.
 *
 * An object's file is mapped only when only root can change it
 * (mapped_file__root_only: root's, writable by no one else, not on FUSE):
 * its DWARF then costs the pages read, which the kernel can reclaim, not a
 * heap copy of every section touched.  Any other is read with pread
 * (ELF_C_READ), so a file its owner truncates or overwrites while cached is
 * a short read and an error, never SIGBUS in the daemon.  Debug files come
 * from our own search (nothing that can block: FIFOs and devices are
 * skipped; paths inside a process's root resolved as it sees them;
 * candidates size-checked before they are read), and one that is not
 * root-only is copied to memory first, since its owner could truncate it
 * under libdwfl's mapping of it.  When the search finds none,
 * debuginfod (if on) is asked by build ID, which never waits: an object
 * loaded while its file is being fetched is marked as waiting, and the
 * symbolizer opens it again once the file has come.
 */
#ifndef PROFD_SYMBOLIZER_OBJ_H
#define PROFD_SYMBOLIZER_OBJ_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/htab.h"
#include "symbolizer/debuginfod.h"
#include "symbolizer/cfi.h"
#include "symbolizer/lines.h"
#include "symbolizer/symbolizer.h"

struct cfi_arch;

/* Result cache per object: up to RC_MAX entries, then a clock hand picks
 * which to replace.  16k results of a few frames each is ~1 MiB, enough
 * for the hot set of a large binary. */
#define RC_MAX 16384

struct rc_entry {
	uint64_t off;
	struct sym_frame *frames;	/* nframes entries; NULL when 0 */
	uint16_t nframes;
	uint32_t hash;
};

struct rcache {
	struct rc_entry *v;
	size_t n, cap;
	struct htab index;
	size_t hand;		/* next entry to replace once full */
	size_t bytes;		/* entries + frame arrays */
};

/*
 * Strings derived from libdw's (demangled names, source paths made
 * absolute), keyed by the addresses of the strings they come from, which
 * are stable for the object's lifetime: each is built once, and results in
 * the result cache can point at them.
 */
struct str_entry {
	const char *k1, *k2;
	char *val;		/* NULL: nothing derived, use the original */
};

struct strmap {
	struct str_entry *v;
	size_t n, cap;
	struct htab index;
	size_t bytes;
};

/* The code-holding DIEs of each compile unit asked about, by address
 * (scopes.c). */
struct cu_scopes;
struct scopes {
	struct cu_scopes *v;
	size_t n, cap;
	struct htab index;	/* by the unit's offset */
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
	char *path;
	struct sym_obj *prev, *next;	/* LRU; symbolizer.lru.next is newest */
	/* Negative errno for a file that opened and matched its identity but
	 * isn't usable ELF, so repeated samples in it don't reopen it. */
	int err;
	/* What the file was when loaded: a change means another object. */
	int fd;			/* our own descriptor of the main file */
	int64_t size, mtime_ns, ctime_ns;
	int64_t checked_ns;	/* when that was last compared */
	/* The main file, until libdwfl's find_elf callback takes them. */
	int handoff_fd;
	Elf *handoff_elf;
	int pid;		/* for finding debug files inside its root */
	/* Who runs it (/proc/PID's owner, else the file's): a debug file
	 * beside it is opened as they would (debuginfo.c). */
	unsigned owner_uid, owner_gid;
	Dwfl *dwfl;
	Dwfl_Module *mod;	/* owned by dwfl */
	struct seg *segs;
	size_t nsegs;
	char *build_id;		/* lowercase hex */
	unsigned char *build_id_bits;
	size_t build_id_len;
	struct sym_object_info info;
	struct rcache rc;
	struct strmap strs;
	struct scopes scopes;
	struct lines lines;	/* its line tables, a few units decoded */
	bool mapped;		/* the main file is mapped, not read (see obj_load) */
	bool symbols;		/* fsyms kept: its cache names functions, not just unwinds */
	size_t read_bytes;	/* its symbol tables and notes, read into memory */
	size_t base_bytes;	/* estimate fixed at load time */
	size_t bytes;		/* what this object adds to symbolizer.bytes */
	uint64_t batch;		/* the symbolizer's batch it was last used in */
	bool dwarf_loaded;	/* obj__load_dwarf() ran */
	bool dwarf_refused;	/* ...and found its DWARF over OBJ_DWARF_READ_MAX */
	bool coarse;		/* rc holds symbol-only answers (coarse mode) */
	/* Defined functions sorted by address: dwfl_module_addrinfo scans the
	 * whole symbol table on every call (~100 us for postgres's). */
	struct fsym *fsyms;
	size_t nfsyms;
	/* .eh_frame_hdr's search table, (start, FDE) pairs sorted by start:
	 * the function starts that name stripped code (cfi.c). */
	const int32_t *fde_table;
	size_t nfde;
	uint64_t fde_table_base;	/* what its entries are relative to */
	bool fde_table_tried;
	/* Its architecture's registers for CFI (cfi.c), from e_machine. */
	const struct cfi_arch *arch;
	bool arch_tried;
	/* Debug files by build ID from servers (NULL: off).  dbgd_wait: this
	 * object was loaded without a debug file while debuginfod had none
	 * yet; it is worth asking again once the generation has moved past
	 * dbgd_gen or, after a failure, once dbgd_retry_ns (nonzero) has
	 * passed. */
	struct debuginfod *dbgd;
	bool dbgd_wait;
	uint64_t dbgd_gen;
	int64_t dbgd_retry_ns;
	/*
	 * Where libelf mapped the main file and libdwfl the debug file (0
	 * length: read into memory, or not found), so their pages can leave
	 * the daemon's RSS between uses (obj__release_pages): each is this
	 * object's own until dwfl_end.  The debug file's identity is noted
	 * when it is handed to libdwfl (debuginfo.c).
	 */
	void *map, *dbg_map;
	size_t map_len, dbg_map_len;
	uint64_t dbg_dev, dbg_ino;
	/* The inflated copy's bytes on disk, while libdwfl holds it
	 * (debuginfo.c, scratch.h): given back when the Dwfl ends. */
	uint64_t scratch_bytes;
	/*
	 * Sections still compressed in the main file or the debug file:
	 * libelf inflates those through its private mapping, writing the
	 * section header there, and MADV_DONTNEED would drop that write
	 * (the header reads compressed again): obj__release_pages leaves
	 * such a mapping be.
	 */
	bool main_compressed, dbg_compressed;
};

/* Where debug files' inflated copies go (symbolizer__set_scratch_dir). */
void obj__set_scratch_dir(const char *dir);
const char *obj__scratch_dir(void);
/* Bytes of every object's inflated copies alive, process-wide (any thread),
 * and the one to call when o's Dwfl ends. */
uint64_t obj__scratch_bytes(void);
void obj__scratch_release(struct sym_obj *o);

/* Open and load key's object, asking dbgd (may be NULL) for a debug file
 * found nowhere else; with symbols, its sorted function symbols too (a
 * cache that only unwinds needs none).  *out is a usable object, or one with ->err set for
 * a file that isn't usable ELF; negative errno when it couldn't be opened
 * at all. */
int obj__open(const struct sym_object_key *key, struct debuginfod *dbgd, bool symbols,
	      struct sym_obj **out);
void obj__free(struct sym_obj *o);
/* Has the file changed since it was loaded (checked at most every 100 ms)? */
bool obj__stale(struct sym_obj *o, int64_t now_ns);
/* Has debuginfod fetched the debug file this object was loaded without?
 * Then it should be opened again (debuginfo.c).  Never blocks; costs an
 * atomic load unless something changed. */
bool obj__debuginfo_arrived(struct sym_obj *o, int64_t now_ns);
/* DWARF (its own or a separate debug file) on first need: libc6-dbg's
 * sections take ~50 ms to decompress.  Returns bytes it added. */
size_t obj__load_dwarf(struct sym_obj *o);
/*
 * Drop the mapped files' pages from the daemon's RSS (madvise
 * MADV_DONTNEED): clean pages of files libelf and libdwfl only read, which
 * stay in the page cache and come back on the next read, a minor fault.
 * What they have read out of them (sorted symbols, decompressed DWARF) is
 * on the heap and stays.
 */
void obj__release_pages(struct sym_obj *o);
/* File offset -> the ELF's virtual address. */
bool obj__vaddr(const struct sym_obj *o, uint64_t off, uint64_t *vaddr);

/* Frames at vaddr, innermost first, names demangled (frames.c). */
int obj__frames(struct sym_obj *o, uint64_t vaddr, struct sym_frame *fr);
/* The function symbol at vaddr only, never loading DWARF (frames.c). */
int obj__symbol_frames(struct sym_obj *o, uint64_t vaddr, struct sym_frame *fr);
/* CFI at vaddr: the compact row, or one step with expressions (cfi.c). */
int obj__cfi(struct sym_obj *o, uint64_t vaddr, struct sym_cfi *row);
int obj__cfi_eval(struct sym_obj *o, uint64_t vaddr, const struct sym_regs *in, sym_read_fn rd,
		  void *ctx, struct sym_regs *caller);
/* The start of the function (FDE) holding vaddr, from .eh_frame_hdr. */
int obj__fde_start(struct sym_obj *o, uint64_t vaddr, uint64_t *start);

/* libdwfl's find_debuginfo (debuginfo.c). */
int obj__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			const char *file_name, const char *debuglink_file,
			GElf_Word debuglink_crc, char **debuginfo_file_name);

/* The result cache (rcache.c). */
struct rc_entry *rc__find(const struct rcache *rc, uint64_t off);
int rc__insert(struct rcache *rc, uint64_t off, const struct sym_frame *frames, int n);
void rc__free(struct rcache *rc);

/* Derived strings (frames.c). */
void strmap__free(struct strmap *m);

/*
 * The DIEs whose code holds pc in the unit cudie, innermost first: the
 * inlined instances (inlined[i] true), then the function they are in.  At
 * most max.  The unit is indexed at its first call (scopes.c).  Returns
 * how many, 0 when no function holds pc, or -ENOMEM.
 */
int scopes__at(struct scopes *sc, Dwarf_Die *cudie, uint64_t pc, Dwarf_Die *out, bool *inlined,
	       int max);
void scopes__free(struct scopes *sc);

#endif
