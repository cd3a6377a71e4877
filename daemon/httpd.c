// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <json-c/json.h>

#include "daemon/http.h"
#include "daemon/httpd.h"
#include "daemon/log.h"
#include "lib/clock.h"

/*
 * Bodies past this are evhttp's to refuse (413 with its own HTML); the
 * API's own, smaller limit is enforced by its handlers, with JSON errors.
 */
#define HTTPD_EVHTTP_MAX_BODY (1 << 20)
#define HTTPD_MAX_HEADERS (16 << 10)
/* A client that stalls mid-request or stops reading its reply is dropped
 * after this.  It does not limit how long a profile may take. */
#define HTTPD_IO_TIMEOUT_S 10
/* At exit: how long replies already handed to evhttp get to be written. */
#define HTTPD_DRAIN_TIMEOUT_S 10
#define HTTPD_MAX_COUNTERS 128
#define HTTPD_CLIENT_GONE 499	/* nginx's code for "client closed request", metrics only */

struct httpd_req {
	struct httpd *h;
	struct evhttp_request *req;
	int route;		/* index in routes of the path; -1 for none */
	int64_t start_ns;	/* CLOCK_MONOTONIC */
	/* Parked: waiting for work, on h->parked. */
	bool parked;
	void (*gone)(struct httpd_req *r, void *arg);
	void *gone_arg;
	struct http_peer_watch *watch;
	struct httpd_req *prev, *next;
};

/* A reply handed to evhttp and not yet written out. */
struct reply_track {
	struct httpd *h;
	struct evhttp_connection *evcon;
};

struct counter {
	const char *route;	/* a routes[] path, or "other" */
	int code;
	uint64_t n;
};

struct httpd {
	struct event_base *base;
	struct evhttp *http;
	struct evhttp_bound_socket *bound;
	const struct httpd_route *routes;
	void *ctx;
	void (*on_shutdown)(void *ctx);
	struct httpd_req *parked;
	int inflight;		/* replies not yet written */
	bool closing;
	bool drain_done;
	bool freeing;
	struct event *drain_ev;
	struct event *deadline_ev;
	void (*drained)(void *ctx);
	void *drained_ctx;
	struct counter counters[HTTPD_MAX_COUNTERS];
	int ncounters;
};

static const char *route_label(const struct httpd_req *r)
{
	return r->route >= 0 ? r->h->routes[r->route].path : "other";
}

static void count(struct httpd *h, const char *route, int code)
{
	for (int i = 0; i < h->ncounters; i++) {
		if (h->counters[i].code == code && !strcmp(h->counters[i].route, route)) {
			h->counters[i].n++;
			return;
		}
	}
	/* Labels come from the route table and a handful of codes: it stays small. */
	if (h->ncounters < HTTPD_MAX_COUNTERS)
		h->counters[h->ncounters++] = (struct counter){route, code, 1};
}

/* One line per request, the way access logs read. */
static void req_log(const struct httpd_req *r, int code)
{
	const char *uri = evhttp_request_get_uri(r->req);
	char clean[512];
	size_t i;

	/* The URI is the client's: keep control characters out of the log. */
	for (i = 0; uri && uri[i] && i < sizeof(clean) - 1; i++)
		clean[i] = (unsigned char)uri[i] < 0x20 || uri[i] == 0x7f ? '?' : uri[i];
	clean[i] = '\0';
	log__info("%s %s %d %.1f ms", http__method_name(evhttp_request_get_command(r->req)),
		  clean, code, (clock__mono_ns() - r->start_ns) / 1e6);
	count(r->h, route_label(r), code);
}

static void check_drained(struct httpd *h)
{
	if (h->closing && !h->freeing && !h->drain_done && !h->parked && !h->inflight)
		event_active(h->drain_ev, EV_TIMEOUT, 0);
}

static void finish_drain(struct httpd *h)
{
	if (h->drain_done)
		return;
	h->drain_done = true;
	evtimer_del(h->deadline_ev);
	if (h->drained)
		h->drained(h->drained_ctx);
}

static void on_drained(evutil_socket_t fd, short what, void *arg)
{
	finish_drain(arg);
}

static void on_drain_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct httpd *h = arg;

	log__warn("exiting with %d replies unwritten", h->inflight);
	finish_drain(h);
}

static void on_reply_written(struct evhttp_request *req, void *arg)
{
	struct reply_track *t = arg;
	struct httpd *h = t->h;

	/* The connection may live on for the next request: forget it. */
	evhttp_connection_set_closecb(t->evcon, NULL, NULL);
	free(t);
	h->inflight--;
	check_drained(h);
}

/* The connection closed before the reply was out. */
static void on_reply_aborted(struct evhttp_connection *evcon, void *arg)
{
	struct reply_track *t = arg;
	struct httpd *h = t->h;

	free(t);
	h->inflight--;
	check_drained(h);
}

/* Undo what parking set up on the connection. */
static void unpark(struct httpd_req *r)
{
	struct httpd *h = r->h;
	struct evhttp_connection *evcon;

	if (!r->parked)
		return;
	http__unwatch_peer(r->watch);
	r->watch = NULL;
	evcon = r->req ? evhttp_request_get_connection(r->req) : NULL;
	if (evcon)
		evhttp_connection_set_closecb(evcon, NULL, NULL);
	if (r->prev)
		r->prev->next = r->next;
	else
		h->parked = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->prev = r->next = NULL;
	r->parked = false;
}

struct evhttp_request *httpd_req__ev(struct httpd_req *r)
{
	return r->req;
}

const char *httpd_req__route(const struct httpd_req *r)
{
	return route_label(r);
}

enum evhttp_cmd_type httpd_req__method(const struct httpd_req *r)
{
	return evhttp_request_get_command(r->req);
}

void httpd_req__add_header(struct httpd_req *r, const char *name, const char *value)
{
	evhttp_add_header(evhttp_request_get_output_headers(r->req), name, value);
}

void httpd_req__reply(struct httpd_req *r, int code, const char *content_type,
		      struct evbuffer *body)
{
	struct httpd *h = r->h;
	struct evhttp_request *req = r->req;
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct reply_track *t = NULL;

	unpark(r);
	if (content_type)
		httpd_req__add_header(r, "Content-Type", content_type);
	if (h->closing)
		httpd_req__add_header(r, "Connection", "close");
	req_log(r, code);
	if (evcon)
		t = malloc(sizeof(*t));
	if (t) {
		/* Exactly one of the two runs: on_reply_written clears the closecb. */
		t->h = h;
		t->evcon = evcon;
		h->inflight++;
		evhttp_connection_set_closecb(evcon, on_reply_aborted, t);
		evhttp_request_set_on_complete_cb(req, on_reply_written, t);
	}
	evhttp_send_reply(req, code, http__reason(code), body);
	free(r);
	check_drained(h);
}

static void free_data(const void *data, size_t len, void *arg)
{
	free((void *)data);
}

void httpd_req__reply_data(struct httpd_req *r, int code, const char *content_type, void *data,
			   size_t len)
{
	struct evbuffer *buf = evbuffer_new();

	/* The buffer frees data once it is written. */
	if (!buf || evbuffer_add_reference(buf, data, len, free_data, NULL)) {
		free(data);
		if (buf)
			evbuffer_free(buf);
		httpd_req__error(r, 500, "out of memory");
		return;
	}
	httpd_req__reply(r, code, content_type, buf);
	evbuffer_free(buf);
}

void httpd_req__reply_json(struct httpd_req *r, int code, struct json_object *o)
{
	struct evbuffer *buf = evbuffer_new();
	const char *s = NULL;

	if (o)
		s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!buf || !s || evbuffer_add(buf, s, strlen(s))) {
		log__error("out of memory answering a request");
		httpd_req__reply(r, 500, NULL, NULL);
	} else {
		httpd_req__reply(r, code, "application/json", buf);
	}
	if (buf)
		evbuffer_free(buf);
	json_object_put(o);
}

void httpd_req__reply_string(struct httpd_req *r, int code, const char *msg)
{
	httpd_req__reply_json(r, code, json_object_new_string(msg));
}

void httpd_req__error(struct httpd_req *r, int code, const char *fmt, ...)
{
	struct json_object *o = json_object_new_object();
	struct json_object *msg;
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* The access log line gives the status; a server fault also says why. */
	if (code >= 500 && code != 503)
		log__error("%s", text);
	msg = json_object_new_string(text);
	if (!o || !msg || json_object_object_add(o, "error", msg)) {
		json_object_put(msg);
		json_object_put(o);
		o = NULL;
	}
	httpd_req__reply_json(r, code, o);
}

/* The client hung up while its work ran (the connection's closecb). */
static void on_client_gone(struct evhttp_connection *evcon, void *arg)
{
	struct httpd_req *r = arg;

	unpark(r);
	if (r->gone)
		r->gone(r, r->gone_arg);
	else
		httpd_req__abandon(r);
}

int httpd_req__park(struct httpd_req *r, void (*gone)(struct httpd_req *r, void *arg), void *arg)
{
	struct httpd *h = r->h;
	struct evhttp_connection *evcon = evhttp_request_get_connection(r->req);

	r->gone = gone;
	r->gone_arg = arg;
	r->parked = true;
	r->next = h->parked;
	if (h->parked)
		h->parked->prev = r;
	h->parked = r;
	if (evcon)
		evhttp_connection_set_closecb(evcon, on_client_gone, r);
	r->watch = http__watch_peer(r->req);
	return 0;
}

void httpd_req__abandon(struct httpd_req *r)
{
	struct httpd *h = r->h;

	unpark(r);
	if (!h->freeing && r->req)
		req_log(r, HTTPD_CLIENT_GONE);
	/* libevent >= 2.2 notices hangups itself and leaves the request to us. */
	if (r->req && !evhttp_request_get_connection(r->req))
		evhttp_request_free(r->req);
	free(r);
	check_drained(h);
}

void httpd__for_each_parked(struct httpd *h, void (*fn)(struct httpd_req *r, void *arg,
							 void *ctx),
			    void *ctx)
{
	struct httpd_req *r, *next;

	for (r = h->parked; r; r = next) {
		next = r->next;
		fn(r, r->gone_arg, ctx);
	}
}

static void dispatch(struct evhttp_request *req, void *arg)
{
	struct httpd *h = arg;
	const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
	enum evhttp_cmd_type method = evhttp_request_get_command(req);
	struct httpd_req *r = calloc(1, sizeof(*r));
	char allow[64] = "";
	int match = -1;

	if (!r) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	r->h = h;
	r->req = req;
	r->route = -1;
	r->start_ns = clock__mono_ns();
	for (int i = 0; path && h->routes[i].path; i++) {
		if (strcmp(h->routes[i].path, path))
			continue;
		if (r->route < 0)
			r->route = i;
		if (h->routes[i].method == method) {
			match = i;
			r->route = i;
			break;
		}
	}
	if (h->closing) {
		httpd_req__error(r, 503, "profd is shutting down");
	} else if (match >= 0) {
		h->routes[match].fn(r, h->ctx);
	} else if (r->route >= 0) {
		for (int i = r->route; h->routes[i].path; i++)
			if (!strcmp(h->routes[i].path, path))
				snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), "%s%s",
					 *allow ? ", " : "",
					 http__method_name(h->routes[i].method));
		httpd_req__add_header(r, "Allow", allow);
		httpd_req__error(r, 405, "%s is not allowed on %s (allowed: %s)",
				 http__method_name(method), path, allow);
	} else {
		httpd_req__error(r, 404, "no such route: %.200s", path ? path : "");
	}
}

int httpd__new(struct event_base *base, const struct httpd_opts *opts, struct httpd **out)
{
	struct httpd *h = calloc(1, sizeof(*h));
	int err = 0;

	if (!h)
		return -ENOMEM;
	h->base = base;
	h->routes = opts->routes;
	h->ctx = opts->ctx;
	h->on_shutdown = opts->on_shutdown;
	h->http = evhttp_new(base);
	h->drain_ev = event_new(base, -1, 0, on_drained, h);
	h->deadline_ev = evtimer_new(base, on_drain_deadline, h);
	if (!h->http || !h->drain_ev || !h->deadline_ev) {
		err = -ENOMEM;
		log__error("out of memory setting up the HTTP server");
		goto cleanup;
	}
	evhttp_set_max_headers_size(h->http, HTTPD_MAX_HEADERS);
	evhttp_set_max_body_size(h->http, HTTPD_EVHTTP_MAX_BODY);
	evhttp_set_timeout(h->http, HTTPD_IO_TIMEOUT_S);
	/* Let every method through, so wrong ones get our JSON 405 with Allow. */
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
				   EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
				   EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(h->http, dispatch, h);
	errno = 0;
	h->bound = evhttp_bind_socket_with_handle(h->http, opts->host, opts->port);
	if (!h->bound) {
		err = errno ? -errno : -EADDRNOTAVAIL;
		log__error("cannot listen on %s:%d: %s", opts->host, opts->port, strerror(-err));
		goto cleanup;
	}
	*out = h;
	return 0;
cleanup:
	httpd__free(h);
	return err;
}

void httpd__shutdown(struct httpd *h, void (*drained)(void *ctx), void *ctx)
{
	struct timeval tv = {HTTPD_DRAIN_TIMEOUT_S, 0};

	h->closing = true;
	h->drained = drained;
	h->drained_ctx = ctx;
	if (h->bound) {
		evhttp_del_accept_socket(h->http, h->bound);
		h->bound = NULL;
	}
	if (h->on_shutdown)
		h->on_shutdown(h->ctx);
	evtimer_add(h->deadline_ev, &tv);
	check_drained(h);
}

bool httpd__closing(const struct httpd *h)
{
	return h->closing;
}

int httpd__metrics(const struct httpd *h, struct evbuffer *out)
{
	int err = evbuffer_add_printf(out, "# HELP profd_http_requests_total HTTP requests "
				      "answered, by route and status code.\n"
				      "# TYPE profd_http_requests_total counter\n") < 0;

	for (int i = 0; !err && i < h->ncounters; i++) {
		const struct counter *c = &h->counters[i];

		err = evbuffer_add_printf(out, "profd_http_requests_total{route=\"%s\",code=\"%d\"} "
					  "%" PRIu64 "\n", c->route, c->code, c->n) < 0;
	}
	return err ? -ENOMEM : 0;
}

void httpd__free(struct httpd *h)
{
	if (!h)
		return;
	h->freeing = true;
	/* Closing the connections runs their closecbs, which release parked work. */
	if (h->http)
		evhttp_free(h->http);
	/* Any left have no request any more: evhttp freed it. */
	while (h->parked) {
		h->parked->req = NULL;
		on_client_gone(NULL, h->parked);
	}
	if (h->drain_ev)
		event_free(h->drain_ev);
	if (h->deadline_ev)
		event_free(h->deadline_ev);
	free(h);
}
