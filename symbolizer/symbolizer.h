/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolizer: file offsets in ELF objects -> functions, files, lines and
 * inlined frames, with elfutils libdwfl; kernel addresses -> /proc/kallsyms.
 *
 * Objects are cached by identity (device + inode), not by process, so a
 * hundred postgres backends share one cache entry for the postgres binary.
 * The cache is bounded (max_bytes, an estimate of what each object holds)
 * and evicts least recently used objects.
 *
 * Lifetime: every string in a sym_result or sym_object_info points into the
 * cache and stays valid until the next call on the same symbolizer.
 */
#ifndef PROFD_SYMBOLIZER_H
#define PROFD_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

struct sym_object_info {
	const char *build_id;	/* lowercase hex of NT_GNU_BUILD_ID, or NULL */
	bool has_functions;	/* any symbol table or DWARF */
	bool has_filenames;	/* DWARF line info */
	bool has_line_numbers;
	bool has_inline_frames;	/* DWARF with DW_TAG_inlined_subroutine */
};

struct sym_frame {
	const char *function;	/* demangled; NULL if unknown */
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

/*
 * Where the return address of the function at file_offset is, as a byte
 * offset from the stack pointer, when its CFI (.eh_frame/.debug_frame) says
 * the CFA is stack-pointer based there: the function has not set up a frame
 * pointer, so a frame-pointer walk would skip its caller.  -ENOENT when the
 * CFA is frame-pointer based or no CFI covers the address.
 */
int symbolizer__ret_offset(struct symbolizer *s, const struct sym_object_key *key,
			   uint64_t file_offset, int *sp_offset);

/* Kernel text: /proc/kallsyms, loaded on first use.  res->frames[0].function
 * is "name" or "name [module]". */
int symbolizer__resolve_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *res);
/* The range of kernel text for the [kernel.kallsyms] mapping. */
int symbolizer__kernel_range(struct symbolizer *s, uint64_t *start, uint64_t *limit);

/* Estimated bytes held by the cache, for /metrics. */
size_t symbolizer__cache_bytes(const struct symbolizer *s);
size_t symbolizer__cache_objects(const struct symbolizer *s);

#endif
