// SPDX-License-Identifier: BSD-2-Clause
/*
 * httpd: HTTP lifecycle: dispatch from a route table, parked requests, deadlines, drain,
 * counters (the contract: httpd.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <json-c/json.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "server/http.h"
#include "server/httpd.h"

/*
 * Bodies past this are evhttp's to refuse (413 with its own HTML); the
 * API's own, smaller limit is enforced by its handlers, with JSON errors.
 */
#define HTTPD_EVHTTP_MAX_BODY (1 << 20)
#define HTTPD_MAX_HEADERS (16 << 10)
/* A client that stalls mid-request or stops reading its reply is dropped
 * after this.  It does not limit how long a profile may take. */
#define HTTPD_IO_TIMEOUT_S 10
/* A request's headers and body must all arrive within this of the
 * connection being accepted (or of the previous reply on it being
 * written): the I/O timeout restarts on every byte, so a client sending
 * one byte a second would otherwise hold its connection for hours. */
#define HTTPD_REQUEST_DEADLINE_S 10
/* After accept() fails (EMFILE, ENFILE, ENOBUFS), the listener rests this
 * long: the pending connection stays queued, so retrying at once would spin. */
#define HTTPD_ACCEPT_PAUSE_MS 100
/* Repeated warnings (accept errors, refused or dropped connections) are
 * logged at most once per this, with a count of those left out. */
#define HTTPD_WARN_INTERVAL_S 10
/* At exit: how long replies already handed to evhttp get to be written. */
#define HTTPD_DRAIN_TIMEOUT_S 10
#define HTTPD_MAX_COUNTERS 128
#define HTTPD_CLIENT_GONE 499	/* nginx's code for "client closed request", metrics only */

/*
 * One accepted connection.  It is the evhttp connection's closecb argument
 * from just after accept until it closes, so that one callback counts it,
 * releases a parked request and settles an unwritten reply: evhttp has one
 * closecb per connection.
 */
struct httpd_conn {
	struct httpd *h;
	struct bufferevent *bev;		/* ours from the bevcb */
	struct evhttp_connection *evcon;	/* NULL until adopted */
	struct event *deadline;			/* the request deadline */
	struct httpd_req *parked;		/* waiting for work on this connection */
	bool replying;				/* a reply handed to evhttp, not yet out */
	struct httpd_conn *prev, *next;
};

/* A warning repeated by many clients at once, logged at most once per interval. */
struct warn_limit {
	int64_t last_ns;
	uint64_t suppressed;
};

struct httpd_req {
	struct httpd *h;
	struct httpd_conn *conn;	/* NULL if evhttp made the connection itself */
	struct evhttp_request *req;
	int route;		/* index in routes of the path; -1 for none */
	bool pprof_errors;	/* under httpd_opts.pprof_errors_prefix */
	int64_t start_ns;	/* CLOCK_MONOTONIC */
	/* Parked: waiting for work, on h->parked. */
	bool parked;
	void (*gone)(struct httpd_req *r, void *arg);
	void *gone_arg;
	struct http_peer_watch *watch;
	struct httpd_req *prev, *next;
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
	const char *pprof_prefix;
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
	/* Connections: adopted ones, and those accepted in this loop turn
	 * whose evhttp connection is not known yet. */
	struct httpd_conn *conns, *fresh;
	int nconns;
	int max_conns;
	struct event *adopt_ev;
	struct event *resume_ev;	/* re-enables the listener after an accept error */
	struct warn_limit warn_accept, warn_full, warn_deadline;
	uint64_t accept_errors, refused, deadline_drops;
	struct httpd *next_instance;
	/* What a Host header may name (see httpd_opts.allowed_hosts). */
	char *hosts[HTTPD_MAX_ALLOWED_HOSTS + 4];
	uint64_t misdirected, cross_site;
};

/* The listener's error callback gets evhttp's argument, not ours. */
static struct httpd *instances;

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

/* A rate-limited warning: true when this one should be logged, with
 * *suppressed saying how many were left out since the last. */
static bool warn_now(struct warn_limit *w, uint64_t *suppressed)
{
	int64_t now = clock__mono_ns();

	if (w->last_ns && now - w->last_ns < HTTPD_WARN_INTERVAL_S * 1000000000LL) {
		w->suppressed++;
		return false;
	}
	*suppressed = w->suppressed;
	w->suppressed = 0;
	w->last_ns = now;
	return true;
}

static void deadline_arm(struct httpd_conn *c)
{
	struct timeval tv = {HTTPD_REQUEST_DEADLINE_S, 0};

	if (c->deadline)
		evtimer_add(c->deadline, &tv);
}

static void on_reply_written(struct evhttp_request *req, void *arg)
{
	struct httpd_conn *c = arg;
	struct httpd *h = c->h;

	c->replying = false;
	h->inflight--;
	/* The connection may live on for the next request, which gets the
	 * same deadline as the first.  If it closes instead, its closecb
	 * frees c. */
	deadline_arm(c);
	check_drained(h);
}

static struct httpd_conn *conn_find(struct httpd *h, struct evhttp_connection *evcon)
{
	/* A list walk per request: connections are capped at a few hundred. */
	for (struct httpd_conn *c = h->conns; evcon && c; c = c->next)
		if (c->evcon == evcon)
			return c;
	return NULL;
}

static void on_client_gone(struct evhttp_connection *evcon, void *arg);

static void conn_unlink(struct httpd_conn *c, struct httpd_conn **list)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		*list = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
}

static void conn_free(struct httpd_conn *c)
{
	if (c->deadline)
		event_free(c->deadline);
	free(c);
}

/* The connection is closing, for whatever reason (its closecb). */
static void on_conn_close(struct evhttp_connection *evcon, void *arg)
{
	struct httpd_conn *c = arg;
	struct httpd *h = c->h;

	conn_unlink(c, &h->conns);
	h->nconns--;
	if (c->parked) {
		c->parked->conn = NULL;
		on_client_gone(evcon, c->parked);
	}
	/* The reply was not all written: nothing will come of it. */
	if (c->replying) {
		h->inflight--;
		check_drained(h);
	}
	conn_free(c);
}

/* No complete request arrived in time: drop the connection. */
static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct httpd_conn *c = arg;
	struct httpd *h = c->h;
	uint64_t n;

	h->deadline_drops++;
	if (warn_now(&h->warn_deadline, &n))
		log__warn("dropped a client that sent no complete request in %d s (%" PRIu64
			  " more since the last such message)", HTTPD_REQUEST_DEADLINE_S, n);
	/* Runs on_conn_close, which frees c. */
	evhttp_connection_free(c->evcon);
}

/* Answer a connection past the cap with 503 and close it, before reading it. */
static void refuse(struct httpd_conn *c)
{
	static const char body[] = "{\"error\":\"too many connections\"}";
	struct httpd *h = c->h;
	evutil_socket_t fd = bufferevent_getfd(c->bev);
	char reply[256], sink[4096];
	uint64_t n;
	int len;

	h->refused++;
	if (warn_now(&h->warn_full, &n))
		log__warn("refused a connection: %d are open, the most allowed (%" PRIu64
			  " more refused since the last such message)", h->max_conns, n);
	len = snprintf(reply, sizeof(reply), "HTTP/1.1 503 Service Unavailable\r\n"
		       "Content-Type: application/json\r\nContent-Length: %zu\r\n"
		       "X-Content-Type-Options: nosniff\r\n"
		       "Connection: close\r\nRetry-After: 1\r\n\r\n%s", strlen(body), body);
	if (fd >= 0) {
		/* What the client already sent: closing with it unread would
		 * reset the connection, and the reset can overtake the reply. */
		while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
			;
		(void)!send(fd, reply, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	/* Shuts down the sending side after the reply, runs on_conn_close. */
	evhttp_connection_free(c->evcon);
}

/*
 * Learn the evhttp connections of the sockets accepted this turn.  evhttp
 * (2.1) has no hook at accept that hands over the connection, only the
 * bevcb that makes its bufferevent; evhttp then sets that bufferevent's
 * callbacks with the connection as their argument, which is where it is
 * found here (checked: the connection's bufferevent must be ours).
 */
static void adopt(struct httpd *h)
{
	struct httpd_conn *c;

	while ((c = h->fresh)) {
		bufferevent_data_cb readcb = NULL;
		void *arg = NULL;

		conn_unlink(c, &h->fresh);
		bufferevent_getcb(c->bev, &readcb, NULL, NULL, &arg);
		if (!readcb || !arg || evhttp_connection_get_bufferevent(arg) != c->bev) {
			/* evhttp failed to set it up and freed it already. */
			h->nconns--;
			bufferevent_decref(c->bev);
			conn_free(c);
			continue;
		}
		c->evcon = arg;
		c->next = h->conns;
		if (h->conns)
			h->conns->prev = c;
		h->conns = c;
		evhttp_connection_set_closecb(c->evcon, on_conn_close, c);
		bufferevent_decref(c->bev);
		if (h->nconns > h->max_conns)
			refuse(c);
		else
			deadline_arm(c);
	}
}

static void on_adopt(evutil_socket_t fd, short what, void *arg)
{
	adopt(arg);
}

/* evhttp's bevcb: runs once per accepted socket, before evhttp reads it. */
static struct bufferevent *on_accept(struct event_base *base, void *arg)
{
	struct httpd *h = arg;
	struct httpd_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;	/* evhttp makes its own; the connection goes uncounted */
	c->h = h;
	c->bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	c->deadline = evtimer_new(base, on_deadline, c);
	if (!c->bev || !c->deadline) {
		if (c->bev)
			bufferevent_free(c->bev);
		conn_free(c);
		return NULL;
	}
	/* Held until adopt(), so that it can tell if evhttp freed it. */
	bufferevent_incref(c->bev);
	c->next = h->fresh;
	if (h->fresh)
		h->fresh->prev = c;
	h->fresh = c;
	h->nconns++;
	event_active(h->adopt_ev, EV_TIMEOUT, 0);
	return c->bev;
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct httpd *h = arg;

	if (h->bound && !h->closing)
		evconnlistener_enable(evhttp_bound_socket_get_listener(h->bound));
}

/* accept() failed for want of descriptors or memory: log it (rarely) and
 * rest the listener, rather than retry in a loop that logs every turn. */
static void on_accept_error(struct evconnlistener *lev, void *arg)
{
	struct timeval tv = {0, HTTPD_ACCEPT_PAUSE_MS * 1000};
	int err = EVUTIL_SOCKET_ERROR();
	struct httpd *h;
	uint64_t n;

	for (h = instances; h; h = h->next_instance)
		if (h->bound && evhttp_bound_socket_get_listener(h->bound) == lev)
			break;
	if (!h)
		return;
	h->accept_errors++;
	if (warn_now(&h->warn_accept, &n))
		log__warn("cannot accept connections: %s; pausing %d ms (%" PRIu64 " more "
			  "failures since the last such message)", strerror(err),
			  HTTPD_ACCEPT_PAUSE_MS, n);
	evconnlistener_disable(lev);
	evtimer_add(h->resume_ev, &tv);
}

/* Undo what parking set up on the connection. */
static void unpark(struct httpd_req *r)
{
	struct httpd *h = r->h;

	if (!r->parked)
		return;
	http__unwatch_peer(r->watch);
	r->watch = NULL;
	if (r->conn)
		r->conn->parked = NULL;
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
	struct httpd_conn *c = r->conn;
	bool last = h->closing || http__peer_half_closed(r->watch);

	unpark(r);
	if (content_type)
		httpd_req__add_header(r, "Content-Type", content_type);
	httpd_req__add_header(r, "X-Content-Type-Options", "nosniff");
	if (last)
		httpd_req__add_header(r, "Connection", "close");
	/* HEAD: the length GET's body would have, and no body.  libevent
	 * 2.1 writes a body it is given for HEAD, without a length, and the
	 * client reads it as the next reply. */
	if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
		char len[24];

		snprintf(len, sizeof(len), "%zu", body ? evbuffer_get_length(body) : (size_t)0);
		evhttp_remove_header(evhttp_request_get_output_headers(req), "Content-Length");
		httpd_req__add_header(r, "Content-Length", len);
		if (body)
			evbuffer_drain(body, evbuffer_get_length(body));
	}
	req_log(r, code);
	if (c) {
		/* Exactly one of on_reply_written and on_conn_close settles it. */
		c->replying = true;
		h->inflight++;
		evhttp_request_set_on_complete_cb(req, on_reply_written, c);
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

/* Go's serveError: the text and a newline, marked as pprof's own error. */
static void reply_pprof_error(struct httpd_req *r, int code, const char *text)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(r->req);
	struct evbuffer *buf = evbuffer_new();

	evhttp_remove_header(out, "Content-Disposition");
	httpd_req__add_header(r, "X-Go-Pprof", "1");
	if (!buf || evbuffer_add_printf(buf, "%s\n", text) < 0) {
		log__error("out of memory answering a request");
		httpd_req__reply(r, 500, NULL, NULL);
	} else {
		httpd_req__reply(r, code, "text/plain; charset=utf-8", buf);
	}
	if (buf)
		evbuffer_free(buf);
}

void httpd_req__error(struct httpd_req *r, int code, const char *fmt, ...)
{
	struct json_object *o, *msg;
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* The access log line gives the status; a server fault also says why. */
	if (code >= 500 && code != 503)
		log__error("%s", text);
	if (r->pprof_errors) {
		reply_pprof_error(r, code, text);
		return;
	}
	o = json_object_new_object();
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

	r->gone = gone;
	r->gone_arg = arg;
	r->parked = true;
	r->next = h->parked;
	if (h->parked)
		h->parked->prev = r;
	h->parked = r;
	if (r->conn)
		r->conn->parked = r;
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
	const char *host, *site;
	char allow[64] = "";
	int match = -1;

	if (!r) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "X-Content-Type-Options",
				  "nosniff");
		evhttp_send_error(req, 500, NULL);
		return;
	}
	r->h = h;
	r->req = req;
	r->route = -1;
	r->start_ns = clock__mono_ns();
	r->pprof_errors = h->pprof_prefix && path &&
			  !strncmp(path, h->pprof_prefix, strlen(h->pprof_prefix));
	adopt(h);
	r->conn = conn_find(h, evhttp_request_get_connection(req));
	/* The request is complete: the deadline restarts after its reply. */
	if (r->conn)
		evtimer_del(r->conn->deadline);
	host = evhttp_find_header(evhttp_request_get_input_headers(req), "Host");
	site = evhttp_find_header(evhttp_request_get_input_headers(req), "Sec-Fetch-Site");
	for (int i = 0; path && h->routes[i].path; i++) {
		if (strcmp(h->routes[i].path, path))
			continue;
		if (r->route < 0)
			r->route = i;
		/* HEAD is served where GET is, without the body. */
		if (h->routes[i].method == method ||
		    (method == EVHTTP_REQ_HEAD && h->routes[i].method == EVHTTP_REQ_GET)) {
			match = i;
			r->route = i;
			break;
		}
	}
	if (h->closing) {
		httpd_req__error(r, 503, "profd is shutting down");
	} else if (!http__host_allowed(host, (const char *const *)h->hosts)) {
		/* DNS rebinding: a web page's own name, pointed at this address. */
		h->misdirected++;
		httpd_req__error(r, 421, "Host \"%.100s\" does not name this server: an IP address, "
				 "localhost or this machine's name does, and the names in the "
				 "config's \"allowed_hosts\"", host);
	} else if (site && !strcasecmp(site, "cross-site")) {
		/* A page of another site: a browser says so, and nothing else
		 * that profd serves is meant for one. */
		h->cross_site++;
		httpd_req__error(r, 403, "cross-site requests are refused (Sec-Fetch-Site: cross-site)");
	} else if (match >= 0) {
		h->routes[match].fn(r, h->ctx);
	} else if (r->route >= 0) {
		for (int i = r->route; h->routes[i].path; i++)
			if (!strcmp(h->routes[i].path, path))
				snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), "%s%s%s",
					 *allow ? ", " : "",
					 http__method_name(h->routes[i].method),
					 h->routes[i].method == EVHTTP_REQ_GET ? ", HEAD" : "");
		httpd_req__add_header(r, "Allow", allow);
		httpd_req__error(r, 405, "%s is not allowed on %s (allowed: %s)",
				 http__method_name(method), path, allow);
	} else {
		httpd_req__error(r, 404, "no such route: %.200s", path ? path : "");
	}
}

/* The connection cap: asked for, or the default, and at most half the
 * descriptors the process may open, leaving the rest to profiling. */
static int max_conns(int want)
{
	struct rlimit rl;
	int n = want > 0 ? want : HTTPD_DEFAULT_MAX_CONNECTIONS;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 2 < (rlim_t)n) {
		log__warn("serving at most %d connections, not %d: the descriptor limit is %llu",
			  (int)(rl.rlim_cur / 2), n, (unsigned long long)rl.rlim_cur);
		n = rl.rlim_cur / 2 > 0 ? (int)(rl.rlim_cur / 2) : 1;
	}
	return n;
}

/* localhost, this machine's name (and its first label), then extra. */
static int set_hosts(struct httpd *h, const char *const *extra)
{
	char name[256] = "", *dot;
	size_t n = 0;

	h->hosts[n++] = strdup("localhost");
	if (!gethostname(name, sizeof(name) - 1) && *name) {
		h->hosts[n++] = strdup(name);
		dot = strchr(name, '.');
		if (dot && dot != name) {
			*dot = '\0';
			h->hosts[n++] = strdup(name);
		}
	}
	for (size_t i = 0; extra && extra[i] && i < HTTPD_MAX_ALLOWED_HOSTS; i++)
		h->hosts[n++] = strdup(extra[i]);
	for (size_t i = 0; i < n; i++)
		if (!h->hosts[i])
			return -ENOMEM;
	return 0;
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
	h->pprof_prefix = opts->pprof_errors_prefix;
	h->http = evhttp_new(base);
	h->drain_ev = event_new(base, -1, 0, on_drained, h);
	h->deadline_ev = evtimer_new(base, on_drain_deadline, h);
	h->adopt_ev = event_new(base, -1, 0, on_adopt, h);
	h->resume_ev = evtimer_new(base, on_resume, h);
	h->max_conns = max_conns(opts->max_connections);
	err = set_hosts(h, opts->allowed_hosts);
	if (err)
		goto cleanup;
	h->next_instance = instances;
	instances = h;
	if (!h->http || !h->drain_ev || !h->deadline_ev || !h->adopt_ev || !h->resume_ev) {
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
	evhttp_set_bevcb(h->http, on_accept, h);
	errno = 0;
	h->bound = evhttp_bind_socket_with_handle(h->http, opts->host, opts->port);
	if (!h->bound) {
		struct in6_addr a;
		bool numeric = inet_pton(AF_INET, opts->host, &a) == 1 ||
			       inet_pton(AF_INET6, opts->host, &a) == 1;

		err = errno ? -errno : -EADDRNOTAVAIL;
		/* A name that doesn't resolve (an empty root has no /etc/hosts)
		 * fails with EAGAIN, which says nothing of the cause. */
		log__error("cannot listen on %s:%d: %s%s", opts->host, opts->port, strerror(-err),
			   numeric ? "" : " (a host name is resolved through /etc/hosts or DNS; "
					  "a numeric address such as 127.0.0.1 needs neither)");
		goto cleanup;
	}
	evconnlistener_set_error_cb(evhttp_bound_socket_get_listener(h->bound), on_accept_error);
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
	evtimer_del(h->resume_ev);
	if (h->on_shutdown)
		h->on_shutdown(h->ctx);
	evtimer_add(h->deadline_ev, &tv);
	check_drained(h);
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
	if (!err)
		err = evbuffer_add_printf(
			      out,
			      "# HELP profd_http_connections_open HTTP connections open.\n"
			      "# TYPE profd_http_connections_open gauge\n"
			      "profd_http_connections_open %d\n"
			      "# HELP profd_http_connections_max The cap on open HTTP connections.\n"
			      "# TYPE profd_http_connections_max gauge\n"
			      "profd_http_connections_max %d\n"
			      "# HELP profd_http_connections_refused_total Connections answered 503 "
			      "because the cap was reached.\n"
			      "# TYPE profd_http_connections_refused_total counter\n"
			      "profd_http_connections_refused_total %" PRIu64 "\n"
			      "# HELP profd_http_request_timeouts_total Connections dropped for not "
			      "sending a complete request in time.\n"
			      "# TYPE profd_http_request_timeouts_total counter\n"
			      "profd_http_request_timeouts_total %" PRIu64 "\n"
			      "# HELP profd_http_accept_errors_total accept() failures (out of "
			      "descriptors or memory).\n"
			      "# TYPE profd_http_accept_errors_total counter\n"
			      "profd_http_accept_errors_total %" PRIu64 "\n"
			      "# HELP profd_http_misdirected_total Requests whose Host named another "
			      "server (answered 421: DNS rebinding, or a name missing from "
			      "allowed_hosts).\n"
			      "# TYPE profd_http_misdirected_total counter\n"
			      "profd_http_misdirected_total %" PRIu64 "\n"
			      "# HELP profd_http_cross_site_total Requests a browser said came from "
			      "another site's page (answered 403).\n"
			      "# TYPE profd_http_cross_site_total counter\n"
			      "profd_http_cross_site_total %" PRIu64 "\n",
			      h->nconns, h->max_conns, h->refused, h->deadline_drops,
			      h->accept_errors, h->misdirected, h->cross_site) < 0;
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
	/* Accepted this turn but never adopted: evhttp_free freed their connections. */
	while (h->fresh) {
		struct httpd_conn *c = h->fresh;

		conn_unlink(c, &h->fresh);
		bufferevent_decref(c->bev);
		conn_free(c);
	}
	for (struct httpd **p = &instances; *p; p = &(*p)->next_instance) {
		if (*p == h) {
			*p = h->next_instance;
			break;
		}
	}
	if (h->drain_ev)
		event_free(h->drain_ev);
	if (h->deadline_ev)
		event_free(h->deadline_ev);
	if (h->adopt_ev)
		event_free(h->adopt_ev);
	if (h->resume_ev)
		event_free(h->resume_ev);
	for (size_t i = 0; i < sizeof(h->hosts) / sizeof(h->hosts[0]); i++)
		free(h->hosts[i]);
	free(h);
}
