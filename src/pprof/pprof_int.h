/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof_int: the builder's tables, shared by the pprof module's files
 * (builder.c builds them, encode.c writes them out, read.c walks them back
 * for the folded and flamegraph renderers).  Not for other modules.
 *
 * Every table (strings, mappings, functions, locations, samples) is an
 * append-only array whose index + 1 is the id the entry gets in the
 * encoded profile, plus a lib/htab index over it for deduplication.
 * Nothing is ever removed, so ids stay stable.
 */
#ifndef PROFD_PPROF_INT_H
#define PROFD_PPROF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/htab.h"
#include "pprof/pprof.h"

struct pstr {
	char *s;
	size_t len;
};

struct pvt {
	int64_t type;
	int64_t unit;
};

struct pmapping {
	uint64_t start;
	uint64_t limit;
	uint64_t offset;
	int64_t file;
	int64_t build_id;
	bool has_functions;
	bool has_filenames;
	bool has_line_numbers;
	bool has_inline_frames;
};

struct pfunction {
	int64_t name;
	int64_t system_name;
	int64_t filename;
	int64_t start_line;
};

struct plocation {
	uint64_t mapping_id;
	uint64_t address;
	size_t line_off; /* into pprof.lines */
	size_t nlines;
};

struct plabel {
	int64_t key;
	int64_t str;
	int64_t num;
	int64_t num_unit;
	bool is_str;
};

struct psample {
	size_t loc_off; /* into pprof.sample_locs */
	size_t nlocs;
	size_t label_off; /* into pprof.labels */
	size_t nlabels;
	/* values live at pprof.values[index * pprof.ntypes] */
};

struct pprof {
	struct pvt *sample_types;
	size_t ntypes;
	struct pvt period_type;
	int64_t period;
	int64_t time_nanos;
	int64_t duration_nanos;
	int64_t default_sample_type;
	int64_t *comments;
	size_t ncomments, comments_cap;

	struct pstr *strs;
	size_t nstrs, strs_cap;
	struct htab strs_index;

	struct pmapping *mappings;
	size_t nmappings, mappings_cap;
	struct htab mappings_index;

	struct pfunction *functions;
	size_t nfunctions, functions_cap;
	struct htab functions_index;

	struct plocation *locations;
	size_t nlocations, locations_cap;
	struct htab locations_index;
	struct pprof_line *lines;
	size_t nlines, lines_cap;

	struct psample *samples;
	size_t nsamples, samples_cap;
	struct htab samples_index;
	uint64_t *sample_locs;
	size_t nsample_locs, sample_locs_cap;
	struct plabel *labels;
	size_t nlabels, labels_cap;
	int64_t *values;
	size_t values_cap;
};

/* Index of s in the string table without adding it; -1 when never seen. */
int64_t pprof__str_lookup(const struct pprof *p, const char *s);
/* The string value of the sample's first label called key, or -1. */
int64_t pprof__sample_str_label(const struct pprof *p, const struct psample *s, int64_t key);
/* dst[i] += src[i], as unsigned: wrapping is defined there, signed overflow is not. */
void pprof__values_add(int64_t *dst, const int64_t *src, size_t n);

#endif
