/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolizer: file offsets in ELF objects -> functions, files, lines and
 * inlined frames, with elfutils libdwfl; kernel addresses -> /proc/kallsyms.
 *
 * Objects are cached by identity (device + inode), not by process, so a
 * hundred postgres backends share one cache entry for the postgres binary.
 * The cache is bounded (max_bytes, an estimate of what each object holds)
 * and evicts least recently used objects, but not, for bytes, those the
 * current batch (a profile: symbolizer__end_batch) has used.
 *
 * Lifetime: every string in a sym_result or sym_object_info points into the
 * cache and stays valid until the next call on the same symbolizer.
 *
 * Debug files are looked for locally and, with DEBUGINFOD_URLS set,
 * fetched from debuginfod servers by a thread of the symbolizer's own
 * (debuginfod.h); no call here waits for one.  Single-threaded otherwise:
 * one caller at a time, one thread (the daemon keeps one per thread).
 */
#ifndef PROFD_SYMBOLIZER_H
#define PROFD_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/debuginfod.h"

#define SYM_MAX_FRAMES 16	/* one physical frame + up to 15 inlined callers */

struct symbolizer;

/*
 * Which object: a path, and the identity it must have (st_dev/st_ino as
 * /proc/PID/maps shows them; 0/0 = don't check).  With pid (and the
 * mapping's start and end) the file is opened as that process sees it:
 * its exact mapping, or the path inside its root (containers).
 */
struct sym_object_key {
	const char *path;
	uint64_t dev;
	uint64_t ino;
	int pid;
	uint64_t start, end;
};

/* A budget for the cache that suits the daemon: an estimate of what the
 * objects hold, not RSS. */
#define SYMBOLIZER_DEFAULT_MAX_BYTES (64u << 20)
/* And on objects, since each holds up to 3 file descriptors (its file,
 * libdw's, a debug file): 256 stay well under a 1024-fd limit. */
#define SYMBOLIZER_DEFAULT_MAX_OBJECTS 256

struct sym_object_info {
	const char *build_id;	/* lowercase hex of NT_GNU_BUILD_ID, or NULL */
	bool has_functions;	/* any symbol table or DWARF */
	bool has_filenames;	/* DWARF line info */
	bool has_line_numbers;
	bool has_inline_frames;	/* DWARF with DW_TAG_inlined_subroutine */
};

struct sym_frame {
	const char *function;	/* demangled (C++, Rust); NULL if unknown */
	const char *system_name;	/* as the binary names it, if not function: mangled */
	const char *file;	/* NULL if unknown */
	int line;		/* 0 if unknown */
};

struct sym_result {
	/* frames[0] is the innermost (inlined) function, the last one the
	 * function whose code the address lies in. */
	struct sym_frame frames[SYM_MAX_FRAMES];
	int nframes;		/* 0: nothing known about this address */
};

struct symbolizer *symbolizer__new(size_t max_bytes);
/*
 * The unwinder's cache: CFI only (symbolizer__cfi, _cfi_eval), so its
 * objects load without the sorted function symbols a name needs (what
 * symbolizer__resolve answers there comes from DWARF alone).  It asks
 * `with`'s debuginfod fetcher (which may be called from any thread), so
 * that a debug file one of them asked for is found by the other: the
 * daemon's unwinder opens an object at its first sample, and the builder's
 * symbolizer wants the debug file when the profile is built.  Free it
 * before `with`.
 */
struct symbolizer *symbolizer__new_unwinder(size_t max_bytes, struct symbolizer *with);
void symbolizer__free(struct symbolizer *s);

/* Negative errno if the object can't be opened or isn't ELF. */
int symbolizer__object_info(struct symbolizer *s, const struct sym_object_key *key,
			    struct sym_object_info *info);

/*
 * Resolve a file offset (the "offset" column of /proc/PID/maps plus the
 * distance from the mapping's start) inside the object.  Returns 0 and
 * res->nframes >= 0, or negative errno if the object is unusable.
 */
int symbolizer__resolve(struct symbolizer *s, const struct sym_object_key *key,
			uint64_t file_offset, struct sym_result *res);

/* Kernel text: /proc/kallsyms, loaded on first use.  res->frames[0].function
 * is "name" or "name [module]". */
int symbolizer__resolve_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *res);
/* The range of kernel text for the [kernel.kallsyms] mapping. */
int symbolizer__kernel_range(struct symbolizer *s, uint64_t *start, uint64_t *limit);

/* Estimated bytes held by the cache, for /metrics: these two may be called
 * from another thread than the one using the symbolizer. */
size_t symbolizer__cache_bytes(const struct symbolizer *s);
size_t symbolizer__cache_objects(const struct symbolizer *s);
/* Objects whose files would have taken more memory to read than the
 * daemon allows one file (their symbol tables, or their DWARF): refused,
 * or symbolized without DWARF.  Any thread. */
size_t symbolizer__refused(const struct symbolizer *s);
/* Change the cache's bounds (0: the default); evicts down to them at once. */
void symbolizer__set_limits(struct symbolizer *s, size_t max_bytes, size_t max_objects);
size_t symbolizer__max_objects(const struct symbolizer *s);
/*
 * Under memory pressure (profile/memgov.c): lower the byte bound to percent
 * of what the objects hold now, but not under floor_bytes (nor raise it),
 * evicting the least recently used down to it at once; the estimated bytes
 * freed.  The floor is what keeps repeated shrinking from leaving a cache
 * smaller than one profile's objects, which then reloads them all on every
 * build.  symbolizer__set_limits() puts the bound back.
 */
size_t symbolizer__shrink(struct symbolizer *s, unsigned percent, size_t floor_bytes);
/* Objects opened since it was made (each a load of its file's tables):
 * what an undersized cache costs shows here first.  Any thread. */
uint64_t symbolizer__loads(const struct symbolizer *s);
/*
 * Let the pages of the cached objects' mapped files leave the daemon's RSS
 * (clean page-cache pages: they come back, by a minor fault, when read
 * again).  What the objects hold on the heap stays.  For the end of a batch
 * of lookups: a profile built, a drain unwound.  Like every call here, from
 * the thread using s.
 */
void symbolizer__release_pages(struct symbolizer *s);
/*
 * The end of a profile's lookups (the builder's symbolizer; the unwinder's
 * has no batches).  Within a batch, objects it used are not evicted for
 * bytes, so the cache may pass its byte bound by what one profile needs,
 * but never the bound as set (new, set_limits), which shrink() leaves
 * alone; here it goes back under it, and the pages are released as above.
 * symbolizer__set_limits() and _shrink() end the batch too.
 */
void symbolizer__end_batch(struct symbolizer *s);
/*
 * Where debug files are inflated for libdw to map (scratch.h), for every
 * symbolizer in the process: SCRATCH_DIR_DEFAULT ("/var/tmp") unless set;
 * "" keeps them in memory, as libdw does by itself.  A directory in memory
 * (tmpfs) or not writable is the same as "".  Call it before any
 * symbolizer is used.
 */
void symbolizer__set_scratch_dir(const char *dir);
/* The directory set, or the default: "" when off. */
const char *symbolizer__scratch_dir(void);
/* Bytes of inflated copies on disk now, every symbolizer's (any thread). */
uint64_t symbolizer__scratch_bytes(void);
/*
 * Coarse mode: names from symbol tables only, no DWARF, so no source lines
 * and no inlined frames, for a fraction of the memory (libc6-dbg's DWARF
 * is ~10 MB once decompressed).  Switching drops the objects cached the
 * other way.  Like every call here, from the thread using s.
 */
void symbolizer__set_coarse(struct symbolizer *s, bool coarse);
bool symbolizer__coarse(const struct symbolizer *s);
/* Debug files fetched from the servers in DEBUGINFOD_URLS, for /metrics:
 * all 0 when that is unset. */
void symbolizer__debuginfod_stats(const struct symbolizer *s, struct debuginfod_stats *st);

#endif
