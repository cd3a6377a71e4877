/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * job: the builder thread's half of any profile a taker asked for, the same
 * for every source: build it through its source (profile/source.h), then
 * render it (render/) into bytes.  The taker does the rest on the loop: it
 * takes the source's snapshot before, and answers after (server/api.c,
 * which submits the job to the builder).
 */
#ifndef PROFD_PROFILE_JOB_H
#define PROFD_PROFILE_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "pprof/pprof.h"
#include "render/render.h"

struct profile_source;
struct symbolizer;

struct profile_job {
	struct profile_source *src;	/* owned: profile_job__release() frees it */
	struct render_opts render;
	/* What the pprof format may hold (a receiver's, e.g. Pyroscope's);
	 * zeros: no bound.  A profile past it is coarsened (pprof__coarsen:
	 * labels beyond LABELS_DEFAULT merged, then rare stacks folded into
	 * their callers) and says so in a comment.  Folded and SVG are never
	 * coarsened: they go to people, and the flamegraph has its own budget. */
	struct pprof_limits limits;
	struct pprof_coarsen_result coarsen;	/* what that did */
	/* What profile_job__build() made: */
	const char *failed;		/* what failed ("building the profile", ...), or NULL */
	uint8_t *data;			/* malloc'd; a taker that keeps it sets this NULL */
	size_t len;
	int64_t render_cpu_ns;		/* this thread's CPU time rendering took */
};

/* On the builder thread (or in profd record, the loop's), with a symbolizer
 * nobody else uses meanwhile, after the source's snapshot: 0 or negative
 * errno, and then failed says which step. */
int profile_job__build(struct profile_job *j, struct symbolizer *sym);
/* Free the source and the bytes; the job itself is the caller's. */
void profile_job__release(struct profile_job *j);

#endif
