/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flamegraph: renders any pprof profile as one self-contained, interactive
 * SVG flame graph in the manner of flamegraph.pl and inferno: a frame per
 * function per stack position, as wide as its share of the total, with
 * hover details, click to zoom, and search, all from a script embedded in
 * the SVG.  Kernel, user, inlined and root (process) frames have their own
 * colours.  Every name is XML-escaped and no name ever reaches script
 * source: the script reads names back from the DOM.
 */
#ifndef PROFD_FLAMEGRAPH_H
#define PROFD_FLAMEGRAPH_H

#include <stddef.h>

struct pprof;

/* Every field is optional: zero (or a NULL opts) picks the default. */
struct flamegraph_opts {
	const char *title;	/* NULL: "Flame Graph" */
	/*
	 * The line under the title.  NULL: the profile's first comment, less
	 * any "profd: " prefix (profd's CPU profiles state the frequency and
	 * the targets there), and its duration.  The total is always added.
	 */
	const char *subtitle;
	/* What a value counts, in every title: "samples", "bytes".  NULL:
	 * "bytes" when the sample type's unit is bytes, time ("1.23 s",
	 * "45.6 ms") when it is nanoseconds, else "samples". */
	const char *unit;
	/* String label whose value is the root frame; NULL: "process_name",
	 * "": none. */
	const char *root_label;
	int width;		/* px; 0: 1200 */
	/*
	 * Frames narrower than this many px are not drawn one by one: each
	 * run of such siblings becomes one "[N small frames]" frame, dropped
	 * too if still narrower.  This bounds the SVG's size whatever the
	 * profile's.  0: 1 px.
	 */
	double min_width;
};

/*
 * Render sample value value_index of p as an SVG document.  *out is
 * malloc'd and NUL-terminated, caller frees; *len excludes the NUL.
 * Samples whose value is not positive are left out.  0 or negative errno.
 */
int flamegraph__svg(struct pprof *p, size_t value_index, const struct flamegraph_opts *opts,
		    char **out, size_t *len);

#endif
