/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * server: profd's HTTP API on evhttp.  The compute_ctl-compatible
 * /profile/cpu (one POST session at a time), the pprof-compatible
 * /debug/pprof/profile scrape endpoint (independent sessions up to the
 * sampler's cap), /health and /metrics.  docs/api.md is the contract.
 * Everything runs on the event loop's thread.
 */
#ifndef PROFD_SERVER_H
#define PROFD_SERVER_H

#include "sampler.h"

struct event_base;
struct server;

struct server_opts {
	const char *host;		/* address to listen on, e.g. "127.0.0.1" */
	int port;
	/* Used by every request that names no targets of its own.  Not
	 * copied: must stay valid until server__free(). */
	struct targets targets;
	struct heap *heap;		/* heap tracking, or NULL when off */
};

/* Bind and start serving.  0, or negative errno after logging why. */
int server__new(struct event_base *base, struct sampler *sm, const struct server_opts *opts,
		struct server **out);

/*
 * Begin a graceful exit: stop accepting connections, end every running
 * session so that each waiting client gets the profile collected so far,
 * and answer new requests on open connections with 503.  drained(ctx) runs
 * once, from the loop, when every reply has been written or after a
 * deadline.  Call at most once.
 */
void server__shutdown(struct server *srv, void (*drained)(void *ctx), void *ctx);

/* Close every connection and free every session the server still holds.
 * Call before sampler__free().  NULL is fine. */
void server__free(struct server *srv);

#endif
