/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * render: a built profile in the format a client asked for.  The one place
 * that knows the formats, their media types, and which sample type a
 * folded or SVG rendering shows, for `profd record` and `profd serve`.
 */
#ifndef PROFD_RENDER_H
#define PROFD_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pprof;

enum render_format {
	RENDER_PPROF,		/* profile.proto, gzipped unless asked not to be */
	RENDER_FOLDED,		/* collapsed stacks for flamegraph.pl */
	RENDER_SVG,		/* an interactive flamegraph */
	/* Go's legacy heap text (?debug=1 of /debug/pprof/heap); not a format=
	 * value.  The profile's values must be as sampled (heap__source_sampled). */
	RENDER_GO_HEAP_TEXT,
};

/* "pprof" (or NULL), "folded", "svg".  -EINVAL for anything else. */
int render__parse_format(const char *name, enum render_format *out);

struct render_opts {
	enum render_format format;
	bool gzip;		/* RENDER_PPROF only */
	/* The sample type folded and SVG show, e.g. "inuse_space"; NULL: the
	 * profile's default, else its first. */
	const char *value;
	const char *title;	/* SVG only */
	/* Folded and SVG: the string label whose value is the root frame, e.g.
	 * "backend_type" (samples without it show their process_name); NULL:
	 * process_name; "": none. */
	const char *split;
};

/* *out is malloc'd, caller frees. */
int render__profile(struct pprof *p, const struct render_opts *opts, uint8_t **out,
		    size_t *len);

/* Media type: octet-stream for pprof (what Alloy >= 1.11 accepts). */
const char *render__content_type(enum render_format f);

#endif
