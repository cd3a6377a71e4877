/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pipeline: what `profd record` and `profd serve` both run, set up and torn
 * down in one place: the event loop, the BPF object, the symbolizer and the
 * CPU sampler.  Heap tracking, which each command configures its own way,
 * is started on top of it.
 *
 * Two symbolizers, so that none is shared between threads: sym is the
 * builder thread's (and record's), for names and lines; unwind_sym is the
 * loop's, for the call frame information the unwinder reads as samples
 * arrive.
 */
#ifndef PROFD_PIPELINE_H
#define PROFD_PIPELINE_H

#include <stdbool.h>

struct bpfobj;
struct builder;
struct env;
struct event_base;
struct sampler;
struct symbolizer;

struct pipeline {
	struct event_base *base;
	struct bpfobj *obj;
	struct symbolizer *sym;
	struct symbolizer *unwind_sym;
	struct sampler *sm;
	struct builder *builder;	/* serve's profiles are built there */
};

/* heap: load the heap programs too; offcpu: the off-CPU program (its
 * verification costs ~0.3 s of CPU at start).  On failure, what was
 * missing has been logged, and everything opened so far is closed.  0 or
 * negative errno. */
int pipeline__open(struct pipeline *p, bool heap, bool offcpu, int exit_hook,
		   const struct env *env);
/* Free what pipeline__open() made; a zeroed pipeline is fine. */
void pipeline__close(struct pipeline *p);

#endif
