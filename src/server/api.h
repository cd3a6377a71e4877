/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * api: profd serve's HTTP API, the route table and its handlers.  The
 * compute_ctl-compatible /profile/cpu (one POST session at a time), the
 * pprof-compatible /debug/pprof/profile scrape endpoint (independent
 * sessions up to the sampler's cap), heap profiles, /health, /metrics and
 * the page.  docs/api.md is the contract.
 */
#ifndef PROFD_API_H
#define PROFD_API_H

#include "pprof/pprof.h"
#include "tracer/targets.h"

struct api;
struct bpfobj;
struct builder;
struct event_base;
struct heap;
struct memgov;
struct sampler;
struct symbolizer;

struct api_opts {
	const char *host;		/* address to listen on, e.g. "127.0.0.1" */
	int port;
	struct bpfobj *obj;
	struct sampler *sampler;
	/* Profiles are built on the builder's thread with sym, which nothing
	 * else may use meanwhile; unwind_sym is read for /metrics only. */
	struct builder *builder;
	struct symbolizer *sym;
	struct symbolizer *unwind_sym;
	struct heap *heap;		/* heap tracking, or NULL when off */
	struct memgov *memgov;		/* checked after each build; for /metrics */
	/* Used by every request that names no targets of its own.  Not
	 * copied: must stay valid until api__free(). */
	struct targets *targets;	/* their gone pids are dropped as requests meet them */
	int max_connections;		/* see struct httpd_opts */
	const char *const *allowed_hosts;	/* see struct httpd_opts */
	/* The labels of every profile whose request asks for none (profile/labels.h). */
	unsigned labels;
	/* What a /debug/pprof/ route profile may hold before it is coarsened (the
	 * compute routes' have no bound unless the request asks). */
	struct pprof_limits scrape_limits;
};

/* Bind and start serving.  0, or negative errno after logging why. */
int api__new(struct event_base *base, const struct api_opts *opts, struct api **out);

/*
 * Begin a graceful exit: stop accepting connections, end every running
 * session so that each waiting client gets the profile collected so far,
 * and answer new requests on open connections with 503.  drained(ctx) runs
 * once, from the loop, when every reply has been written or after a
 * deadline.  Call at most once.
 */
void api__shutdown(struct api *a, void (*drained)(void *ctx), void *ctx);

/* Close every connection and free every session (a profile still being
 * built is freed when the builder hands it back).  Call before
 * builder__free() and sampler__free().  NULL is fine. */
void api__free(struct api *a);

#endif
