/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metrics: what GET /metrics shows, in Prometheus' text format.  Each
 * metric is declared once, as one row of one table in metrics.c: its name
 * (with labels), type, help and value side by side, so a row added
 * anywhere reports its own value.  The figures are read from their owners
 * first (each module's *__stats()), then the table is written.  The HTTP
 * request counters are httpd's (httpd__metrics), written after these.
 */
#ifndef PROFD_METRICS_H
#define PROFD_METRICS_H

struct bpfobj;
struct builder;
struct evbuffer;
struct heap;
struct memgov;
struct sampler;
struct symbolizer;

struct metrics_sources {
	struct bpfobj *obj;
	struct sampler *sm;
	struct heap *heap;		/* NULL without heap tracking */
	struct symbolizer *sym;		/* the builder's */
	struct symbolizer *unwind_sym;	/* the unwinder's */
	struct builder *builder;
	struct memgov *memgov;
	uint64_t profiles_coarsened;	/* the API's: profiles made to fit their limits */
	uint64_t samples_coarsened;	/* samples those lost by merging */
};

/* Appends every metric to buf: 0, or -ENOMEM. */
int metrics__write(const struct metrics_sources *src, struct evbuffer *buf);

#endif
