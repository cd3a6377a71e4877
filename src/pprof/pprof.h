/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof: a hand-written builder and encoder for profile.proto
 * (github.com/google/pprof/proto/profile.proto).
 *
 * The builder owns every string it is given (it copies them), deduplicates
 * strings, mappings, functions and locations, and merges samples that have
 * the same location list and labels by adding their values.  IDs returned
 * are the 1-based ids that end up in the encoded profile; 0 means error.
 */
#ifndef PROFD_PPROF_H
#define PROFD_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pprof;

struct pprof_value_type {
	const char *type;
	const char *unit;
};

struct pprof_mapping {
	uint64_t start;
	uint64_t limit;
	uint64_t offset;
	const char *file;
	const char *build_id;	/* hex, or NULL */
	bool has_functions;
	bool has_filenames;
	bool has_line_numbers;
	bool has_inline_frames;
};

/* One Line of a Location.  A Location with inlined frames has several,
 * innermost (the function the address is really in) first. */
struct pprof_line {
	uint64_t function_id;
	int64_t line;
};

/* A label is either a string (str != NULL) or a number (str == NULL). */
struct pprof_label {
	const char *key;
	const char *str;
	int64_t num;
	const char *num_unit;	/* may be NULL */
};

/* sample_types[0..n) become Profile.sample_type, in that order. */
struct pprof *pprof__new(const struct pprof_value_type *sample_types, size_t n,
			 struct pprof_value_type period_type, int64_t period);
void pprof__free(struct pprof *p);

void pprof__set_time(struct pprof *p, int64_t time_nanos, int64_t duration_nanos);
/* Name of the sample type pprof tools show by default (e.g. "inuse_space"). */
int pprof__set_default_sample_type(struct pprof *p, const char *type);
int pprof__add_comment(struct pprof *p, const char *comment);

/* Index in the string table; "" is always 0.  Negative errno on failure. */
int64_t pprof__string(struct pprof *p, const char *s);

/* Deduplicated by every field. */
uint64_t pprof__mapping(struct pprof *p, const struct pprof_mapping *m);
/* Deduplicated by (name, system_name, filename, start_line).  NULL == "". */
uint64_t pprof__function(struct pprof *p, const char *name, const char *system_name,
			 const char *filename, int64_t start_line);
/*
 * Deduplicated by (mapping_id, address) when address != 0, otherwise by
 * (mapping_id, lines).  On a hit the lines of the first call are kept, so
 * callers must give the same lines for the same address.
 */
uint64_t pprof__location(struct pprof *p, uint64_t mapping_id, uint64_t address,
			 const struct pprof_line *lines, size_t nlines);

/*
 * location_ids are leaf first, as profile.proto wants.  values has one
 * entry per sample type.  Samples with equal locations and labels merge.
 */
int pprof__add_sample(struct pprof *p, const uint64_t *location_ids, size_t nlocs,
		      const int64_t *values, const struct pprof_label *labels, size_t nlabels);

size_t pprof__sample_count(const struct pprof *p);

/*
 * What one profile may hold, as a receiver counts it; 0: no bound.
 * Pyroscope's defaults (pkg/validation/limits.go) are 16,000 samples
 * (max_profile_stacktrace_samples) and 4 MiB of uncompressed protobuf
 * (max_profile_size_bytes); it refuses a whole profile past either.
 */
struct pprof_limits {
	size_t max_samples;
	size_t max_bytes;	/* the encoded profile before gzip */
};

#define PPROF_PYROSCOPE_MAX_SAMPLES 16000
#define PPROF_PYROSCOPE_MAX_BYTES (4u << 20)

struct pprof_coarsen_result {
	bool coarsened;		/* the profile was over a limit, and was made to fit */
	size_t samples_before, samples_after;
	size_t bytes_before, bytes_after;
	bool labels_merged;	/* step 1 ran */
	bool labels_dropped;	/* step 3 ran */
	int64_t fold_below;	/* step 2: stacks' frames lighter than this folded; 0: none */
};

/*
 * Make *pp fit lim.  A profile already within it is left alone.  Otherwise,
 * in this order, until it fits:
 *   1. samples that differ only in labels not in keep (a NULL-ended list
 *      of label keys, e.g. the low-cardinality defaults) merge;
 *   2. rare stacks fold into their callers: every frame whose subtree
 *      (the samples through it, by the default sample type, else the first)
 *      weighs less than a threshold is cut, its samples charged to the
 *      deepest caller that weighs at least that; the lowest threshold that
 *      fits is used;
 *   3. if more label sets remain than samples are allowed, every label
 *      goes, and step 2 runs again.
 * Totals are kept exactly.  The profile then says so in a comment, and
 * *pp is a new profile (the old one freed).  0, or negative errno (*pp
 * unchanged).  res may be NULL.
 */
int pprof__coarsen(struct pprof **pp, const struct pprof_limits *lim, const char *const *keep,
		   struct pprof_coarsen_result *res);

/* Bytes pprof__encode() would write without gzip, in *len.  0 or negative errno. */
int pprof__encoded_size(struct pprof *p, size_t *len);

/* Serialise; gzip it when gzip is true.  *out is malloc'd, caller frees. */
int pprof__encode(struct pprof *p, bool gzip, uint8_t **out, size_t *out_len);

/*
 * Collapsed stacks ("root;...;leaf N\n"), the text flamegraph.pl reads,
 * summing sample value value_index.  Inlined frames expand into their own
 * frames.  When root_label is non-NULL the value of that string label
 * (e.g. "process_name") becomes the root frame.  *out is malloc'd and
 * NUL-terminated.
 */
int pprof__folded(struct pprof *p, size_t value_index, const char *root_label, char **out,
		  size_t *out_len);

/*
 * A heap profile (sample types alloc_objects, alloc_space, inuse_objects,
 * inuse_space, values as sampled) in Go's legacy text form, as
 * /debug/pprof/heap?debug=1 serves it (pprof/heaptext.c).  *out is
 * malloc'd, NUL-terminated.  -EINVAL if a sample type is missing.
 */
int pprof__heap_text(const struct pprof *p, char **out, size_t *len);

/* ---- reading a profile back (for renderers such as flamegraph) ------------ */

/* The i-th comment, NULL past the end.  Valid until pprof__free(). */
const char *pprof__comment(const struct pprof *p, size_t i);
/* The default sample type's name, or NULL when none was set. */
const char *pprof__default_sample_type(const struct pprof *p);
/* Sample type i; its strings are valid until pprof__free().  -EINVAL past the end. */
int pprof__sample_type(const struct pprof *p, size_t i, struct pprof_value_type *out);
int64_t pprof__duration_nanos(const struct pprof *p);

enum pprof_frame_kind {
	PPROF_FRAME_ROOT,	/* the root label's value, e.g. the process name */
	PPROF_FRAME_USER,
	PPROF_FRAME_KERNEL,	/* a location under the [kernel.kallsyms] mapping */
	PPROF_FRAME_INLINED,	/* a Line of a Location other than its last (outermost) */
};

struct pprof_frame {
	/* The function's name; "0x..." (its address) or "[unknown]" without one. */
	const char *name;
	enum pprof_frame_kind kind;
};

/*
 * Called once per sample, frames root first, as pprof__folded() would
 * write them.  frames and the names are only valid during the call.
 * A non-zero return stops the walk and is returned by pprof__for_each_stack().
 */
typedef int (*pprof_stack_fn)(const struct pprof_frame *frames, size_t nframes, int64_t value,
			      void *ctx);

/*
 * Walk every sample with its value value_index.  When root_label is non-NULL
 * the sample's string label of that key becomes a PPROF_FRAME_ROOT frame
 * (samples without it get none).  "a|b" (up to 4 keys, each under 64
 * bytes) takes the first of them a sample has, e.g.
 * "backend_type|process_name".
 */
int pprof__for_each_stack(const struct pprof *p, size_t value_index, const char *root_label,
			  pprof_stack_fn fn, void *ctx);

#endif
