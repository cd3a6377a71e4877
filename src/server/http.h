/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http: small helpers over libevent's evhttp that know nothing about
 * profiling: status texts, media types, bodies, strict query parameters
 * and noticing that a client went away while its reply is being prepared.
 */
#ifndef PROFD_HTTP_H
#define PROFD_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/queue.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

struct http_peer_watch;

/* "OK", "Not Found", ...; a generic text for codes profd doesn't use. */
const char *http__reason(int code);
/* "GET", "POST", ... */
const char *http__method_name(enum evhttp_cmd_type method);

/* The request's media type is type (case-insensitive), parameters such as
 * "; charset=utf-8" allowed.  False when there is no Content-Type. */
bool http__content_type_is(struct evhttp_request *req, const char *type);

/*
 * Copy the request body, NUL-terminated, into *out (malloc'd, caller
 * frees).  -E2BIG when it is longer than max bytes, -ENOMEM.
 */
int http__body(struct evhttp_request *req, size_t max, char **out, size_t *len);

/*
 * evhttp (2.1) stops reading a connection while its request is being
 * handled, so a client that hangs up goes unnoticed until the reply is
 * written, which for a profile may be an hour later.  This watches the
 * socket and, when the client is gone (a reset, or a close: EOF and a
 * reset for a probe), frees the connection, which runs its closecb: set
 * one with evhttp_connection_set_closecb() to release what the request
 * holds.  Bytes sent after the request are kept for evhttp, up to 64 KiB
 * (past it the client is dropped), and don't stop the watch.  A client
 * that only shut down its sending side still gets its reply, which must
 * then say Connection: close (see http__peer_half_closed()).  NULL on
 * failure (the request still works).
 */
struct http_peer_watch *http__watch_peer(struct evhttp_request *req);
/* The client shut down its sending side and waits for the reply. */
bool http__peer_half_closed(const struct http_peer_watch *w);
/* Stop watching; NULL is fine.  Safe from inside the connection's closecb. */
void http__unwatch_peer(struct http_peer_watch *w);

/*
 * Whether a request's Host header names this server, against DNS
 * rebinding: a page on evil.example whose name is then pointed at
 * 127.0.0.1 reaches a loopback server with "Host: evil.example".  Allowed:
 * an IP address (an address is not rebound), or one of names (NULL-ended;
 * compared without case, the port and a final dot).  No header (HTTP/1.0)
 * is allowed: browsers always send one.
 */
bool http__host_allowed(const char *host, const char *const *names);

#endif
