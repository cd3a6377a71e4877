/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * httpd: the HTTP lifecycle of profd serve on evhttp, knowing nothing of
 * profiling: one route table dispatch (405 with Allow, 404, 503 while
 * closing), one access-log line and one counter per reply, requests parked
 * while their work runs (a client that hangs up is noticed and its work
 * released), and a graceful shutdown that waits for every reply to be
 * written, up to a deadline.
 *
 * A handler owns its request and must answer it exactly once, now or
 * later, through httpd_req__reply() or one of its wrappers.  Every reply
 * says X-Content-Type-Options: nosniff: a browser shows what profd sends as
 * the type it names, never as HTML it guessed (a folded profile holds
 * process names that any local user chooses).
 */
#ifndef PROFD_HTTPD_H
#define PROFD_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/http.h>

struct event_base;
struct evbuffer;
struct httpd;
struct httpd_req;
struct json_object;

#define HTTPD_DEFAULT_MAX_CONNECTIONS 256

struct httpd_route {
	enum evhttp_cmd_type method;
	const char *path;
	void (*fn)(struct httpd_req *r, void *ctx);
};

struct httpd_opts {
	const char *host;
	int port;
	const struct httpd_route *routes;	/* ends with a NULL path; not copied */
	void *ctx;				/* passed to every handler */
	/* Open connections allowed; past it a new one is answered 503 and
	 * closed.  0: HTTPD_DEFAULT_MAX_CONNECTIONS.  Lowered to half the
	 * descriptor limit. */
	int max_connections;
	/* Shutdown began: end the work of every parked request, so each
	 * gets its reply. */
	void (*on_shutdown)(void *ctx);
	/* Host names requests may carry besides IP addresses, "localhost"
	 * and this machine's name (http__host_allowed): others get 421.
	 * NULL-ended, or NULL; copied. */
	const char *const *allowed_hosts;
	/*
	 * Requests whose path starts with this (NULL: none) get their errors
	 * as Go's net/http/pprof writes them: text/plain, one line, and
	 * X-Go-Pprof: 1, the pair on which the pprof tool prints a failed
	 * fetch's body rather than its status line alone.  Not copied.
	 */
	const char *pprof_errors_prefix;
};

#define HTTPD_MAX_ALLOWED_HOSTS 32

/* Bind and start serving.  0, or negative errno after logging why. */
int httpd__new(struct event_base *base, const struct httpd_opts *opts, struct httpd **out);

/*
 * Stop accepting, let on_shutdown end parked work, and answer new requests
 * on open connections with 503.  drained(ctx) runs once, from the loop,
 * when every reply has been written or after a deadline.  Call once.
 */
void httpd__shutdown(struct httpd *h, void (*drained)(void *ctx), void *ctx);
/* Close every connection; parked requests get their gone() callback. */
void httpd__free(struct httpd *h);

/* Prometheus lines for the request counters. */
int httpd__metrics(const struct httpd *h, struct evbuffer *out);

/* ---- requests, for handlers ---- */

struct evhttp_request *httpd_req__ev(struct httpd_req *r);
/* The matched route's path, e.g. "/profile/cpu". */
const char *httpd_req__route(const struct httpd_req *r);
enum evhttp_cmd_type httpd_req__method(const struct httpd_req *r);
void httpd_req__add_header(struct httpd_req *r, const char *name, const char *value);

/* Send the reply and free r.  body (may be NULL) is drained by evhttp. */
void httpd_req__reply(struct httpd_req *r, int code, const char *content_type,
		      struct evbuffer *body);
/* A reply whose body is data (malloc'd: taken, freed once written). */
void httpd_req__reply_data(struct httpd_req *r, int code, const char *content_type, void *data,
			   size_t len);
/* JSON; takes o (NULL: out of memory, 500). */
void httpd_req__reply_json(struct httpd_req *r, int code, struct json_object *o);
/* A bare JSON string, as compute_ctl answers some outcomes. */
void httpd_req__reply_string(struct httpd_req *r, int code, const char *msg);
/* {"error": "..."}, or the text alone under pprof_errors_prefix (see
 * httpd_opts); 5xx other than 503 are logged. */
void httpd_req__error(struct httpd_req *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Keep r waiting for work that finishes later (a profile).  If the client
 * goes away first, gone(r, arg) runs: release the work, then call
 * httpd_req__abandon(r).  While parked, r is listed by httpd__for_each_parked().
 */
int httpd_req__park(struct httpd_req *r, void (*gone)(struct httpd_req *r, void *arg), void *arg);
/* Forget a request whose client went away (from gone()), logging 499. */
void httpd_req__abandon(struct httpd_req *r);
/* Visit parked requests; their arg from httpd_req__park(). */
void httpd__for_each_parked(struct httpd *h, void (*fn)(struct httpd_req *r, void *arg,
							 void *ctx),
			    void *ctx);

#endif
