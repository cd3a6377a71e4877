// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <json-c/json.h>

#include "cli.h"
#include "config.h"
#include "flamegraph.h"
#include "http.h"
#include "heap.h"
#include "log.h"
#include "page.h"
#include "pprof.h"
#include "sampler.h"
#include "server.h"

/*
 * The API's body limit is ours to enforce, so that a too-large body gets a
 * JSON 413 like every other error.  evhttp's own limit sits well above it;
 * only past that one does libevent answer by itself (413 with an HTML body).
 */
#define SERVER_MAX_BODY (64 << 10)
#define SERVER_EVHTTP_MAX_BODY (1 << 20)
#define SERVER_MAX_HEADERS (16 << 10)
/* A client that stalls mid-request or stops reading its reply is dropped
 * after this.  It does not limit how long a profile may take. */
#define SERVER_IO_TIMEOUT_S 10
/* At exit: how long replies already handed to evhttp get to be written. */
#define SERVER_DRAIN_TIMEOUT_S 10
#define SERVER_MAX_QUERY_PARAMS 64
#define SERVER_MAX_COUNTERS 128
#define SERVER_CLIENT_GONE 499	/* nginx's code for "client closed request", metrics only */

/* POST /profile/cpu, as compute_ctl defines it. */
#define POST_DEFAULT_FREQ 100
#define POST_DEFAULT_SECONDS 5
#define POST_MAX_SECONDS 60
/* GET /debug/pprof/profile, as Go's net/http/pprof defines it. */
#define SCRAPE_DEFAULT_SECONDS 30
#define SCRAPE_MAX_SECONDS 3600
#define SCRAPE_DEFAULT_FREQ 99

/* compute_ctl's exact strings: clients compare them. */
#define MSG_IN_PROGRESS "Profiling is currently in progress."
#define MSG_ALREADY_RUNNING "Profiling is already in progress."
#define MSG_STOPPED "Profiling stopped successfully."
#define MSG_NOT_RUNNING "Profiling is not in progress, there is nothing to stop."

/* How a finished profile is sent, by who asked for it. */
enum profile_reply {
	REPLY_POST_RAW,		/* POST, archive false */
	REPLY_POST_GZIP,	/* POST, archive true */
	REPLY_SCRAPE_PPROF,
	REPLY_SCRAPE_FOLDED,
	REPLY_SCRAPE_SVG,
};

static const struct {
	bool gzip;
	bool folded;
	const char *content_type;
	const char *disposition;
	bool svg;
} profile_replies[] = {
	[REPLY_POST_RAW] = {false, false, "application/octet-stream",
			    "attachment; filename=\"profile.pb\""},
	[REPLY_POST_GZIP] = {true, false, "application/gzip",
			     "attachment; filename=\"profile.pb.gz\""},
	/* Alloy >= 1.11 rejects any Content-Type but application/octet-stream. */
	[REPLY_SCRAPE_PPROF] = {true, false, "application/octet-stream",
				"attachment; filename=\"profile\""},
	[REPLY_SCRAPE_FOLDED] = {false, true, "text/plain; charset=utf-8", NULL},
	[REPLY_SCRAPE_SVG] = {.content_type = "image/svg+xml; charset=utf-8", .svg = true},
};

/*
 * One HTTP request, from dispatch to its reply.  Profile requests also
 * hold a session and sit on srv->pending until the session is done or the
 * client goes away.
 */
struct request {
	struct server *srv;
	struct evhttp_request *req;
	int route;		/* index in routes[] of the path; -1 for none */
	int64_t start_ns;	/* CLOCK_MONOTONIC */
	struct session *session;
	struct http_peer_watch *watch;
	enum profile_reply reply;
	bool cancelled;		/* a POST ended by DELETE answers 204 */
	struct request *prev, *next;
};

/* A reply handed to evhttp and not yet written out. */
struct reply_track {
	struct server *srv;
	struct evhttp_connection *evcon;
};

struct counter {
	const char *route;	/* a routes[] path, or "other" */
	int code;
	uint64_t n;
};

struct server {
	struct event_base *base;
	struct sampler *sm;
	struct evhttp *http;
	struct evhttp_bound_socket *bound;
	struct targets targets;
	struct heap *heap;		/* NULL: heap tracking is off */
	struct request *pending;	/* profile requests waiting for their session */
	struct request *post;		/* the POST /profile/cpu running, not yet cancelled */
	int64_t start_ns;
	int inflight;			/* replies not yet written */
	bool closing;
	bool drain_done;
	bool freeing;
	struct event *drain_ev;
	struct event *deadline_ev;
	void (*drained)(void *ctx);
	void *drained_ctx;
	struct counter counters[SERVER_MAX_COUNTERS];
	int ncounters;
};

static void on_profile_post(struct request *r);
static void on_profile_status(struct request *r);
static void on_profile_stop(struct request *r);
static void on_pprof_profile(struct request *r);
static int request__set_format(struct request *r, const char *format);
static void on_heap(struct request *r);
static void on_health(struct request *r);
static void on_metrics(struct request *r);
static void on_index(struct request *r);
static void on_sessions(struct request *r);

/*
 * Every route.  A handler owns r and must answer it exactly once, now or
 * later, through request__reply() or a wrapper (which log, count, send
 * and free r).
 */
static const struct route {
	enum evhttp_cmd_type method;
	const char *path;
	void (*fn)(struct request *r);
} routes[] = {
	{EVHTTP_REQ_POST, "/profile/cpu", on_profile_post},
	{EVHTTP_REQ_GET, "/profile/cpu", on_profile_status},
	{EVHTTP_REQ_DELETE, "/profile/cpu", on_profile_stop},
	{EVHTTP_REQ_GET, "/debug/pprof/profile", on_pprof_profile},
	{EVHTTP_REQ_GET, "/profile/heap", on_heap},		/* the pageserver's name */
	{EVHTTP_REQ_GET, "/debug/pprof/heap", on_heap},
	{EVHTTP_REQ_GET, "/debug/pprof/allocs", on_heap},	/* Alloy's memory path */
	{EVHTTP_REQ_GET, "/health", on_health},
	{EVHTTP_REQ_GET, "/metrics", on_metrics},
	{EVHTTP_REQ_GET, "/", on_index},
	{EVHTTP_REQ_GET, "/sessions", on_sessions},
	{0, NULL, NULL},
};

/* CPU time of the daemon: what building a reply costs, for the log. */
static int64_t server__cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const char *request__route_label(const struct request *r)
{
	return r->route >= 0 ? routes[r->route].path : "other";
}

static void server__count(struct server *srv, const char *route, int code)
{
	int i;

	for (i = 0; i < srv->ncounters; i++) {
		if (srv->counters[i].code == code && !strcmp(srv->counters[i].route, route)) {
			srv->counters[i].n++;
			return;
		}
	}
	/* Labels come from routes[] and a handful of codes, so this stays small. */
	if (srv->ncounters < SERVER_MAX_COUNTERS)
		srv->counters[srv->ncounters++] = (struct counter){route, code, 1};
}

/* One line per request, the way access logs read. */
static void request__log(const struct request *r, int code)
{
	const char *uri = evhttp_request_get_uri(r->req);
	char clean[512];
	size_t i;

	/* The URI is the client's: keep control characters out of the log. */
	for (i = 0; uri && uri[i] && i < sizeof(clean) - 1; i++)
		clean[i] = (unsigned char)uri[i] < 0x20 || uri[i] == 0x7f ? '?' : uri[i];
	clean[i] = '\0';
	log__info("%s %s %d %.1f ms", http__method_name(evhttp_request_get_command(r->req)),
		  clean, code, (now_ns() - r->start_ns) / 1e6);
	server__count(r->srv, request__route_label(r), code);
}

static void server__check_drained(struct server *srv)
{
	if (srv->closing && !srv->freeing && !srv->drain_done && !srv->pending && !srv->inflight)
		event_active(srv->drain_ev, EV_TIMEOUT, 0);
}

static void server__finish_drain(struct server *srv)
{
	if (srv->drain_done)
		return;
	srv->drain_done = true;
	evtimer_del(srv->deadline_ev);
	if (srv->drained)
		srv->drained(srv->drained_ctx);
}

static void on_drained(evutil_socket_t fd, short what, void *arg)
{
	server__finish_drain(arg);
}

static void on_drain_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;

	log__warn("exiting with %d replies unwritten", srv->inflight);
	server__finish_drain(srv);
}

static void on_reply_written(struct evhttp_request *req, void *arg)
{
	struct reply_track *t = arg;
	struct server *srv = t->srv;

	/* The connection may live on for the next request: forget it. */
	evhttp_connection_set_closecb(t->evcon, NULL, NULL);
	free(t);
	srv->inflight--;
	server__check_drained(srv);
}

/* The connection closed before the reply was out. */
static void on_reply_aborted(struct evhttp_connection *evcon, void *arg)
{
	struct reply_track *t = arg;
	struct server *srv = t->srv;

	free(t);
	srv->inflight--;
	server__check_drained(srv);
}

static void request__unlink(struct request *r)
{
	struct server *srv = r->srv;

	if (r->prev)
		r->prev->next = r->next;
	else if (srv->pending == r)
		srv->pending = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->prev = r->next = NULL;
	if (srv->post == r)
		srv->post = NULL;
}

/* Undo what waiting for a session set up on the connection. */
static void request__stop_waiting(struct request *r)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(r->req);

	http__unwatch_peer(r->watch);
	r->watch = NULL;
	if (evcon)
		evhttp_connection_set_closecb(evcon, NULL, NULL);
	request__unlink(r);
}

/*
 * Send the reply and free r.  body may be NULL; content_type NULL when
 * there is no body.  Headers set on r->req before this are kept.
 */
static void request__reply(struct request *r, int code, const char *content_type,
			   struct evbuffer *body)
{
	struct server *srv = r->srv;
	struct evhttp_request *req = r->req;
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct evkeyvalq *headers = evhttp_request_get_output_headers(req);
	struct reply_track *t = NULL;

	request__stop_waiting(r);
	if (content_type)
		evhttp_add_header(headers, "Content-Type", content_type);
	if (srv->closing)
		evhttp_add_header(headers, "Connection", "close");
	request__log(r, code);
	if (evcon)
		t = malloc(sizeof(*t));
	if (t) {
		/* Exactly one of the two runs: on_reply_written clears the closecb. */
		t->srv = srv;
		t->evcon = evcon;
		srv->inflight++;
		evhttp_connection_set_closecb(evcon, on_reply_aborted, t);
		evhttp_request_set_on_complete_cb(req, on_reply_written, t);
	}
	evhttp_send_reply(req, code, http__reason(code), body);
	free(r);
	server__check_drained(srv);
}

/* Reply with a JSON value; takes ownership of o (NULL: out of memory). */
static void request__reply_json(struct request *r, int code, struct json_object *o)
{
	struct evbuffer *buf = evbuffer_new();
	const char *s = NULL;

	if (o)
		s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!buf || !s || evbuffer_add(buf, s, strlen(s))) {
		log__error("out of memory answering a request");
		request__reply(r, 500, NULL, NULL);
	} else {
		request__reply(r, code, "application/json", buf);
	}
	if (buf)
		evbuffer_free(buf);
	json_object_put(o);
}

/* compute_ctl answers some outcomes with a bare JSON string. */
static void request__reply_string(struct request *r, int code, const char *msg)
{
	request__reply_json(r, code, json_object_new_string(msg));
}

/* Every error is {"error": "..."}. */
static void request__error(struct request *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void request__error(struct request *r, int code, const char *fmt, ...)
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
	request__reply_json(r, code, o);
}

static void free_encoded(const void *data, size_t len, void *arg)
{
	free((void *)data);
}

/*
 * Encode p as r->reply says and send it; takes p.  value_index is the
 * sample value folded and svg show.
 */
static void request__send_profile(struct request *r, struct pprof *p, size_t value_index,
				  const char *title)
{
	const typeof(profile_replies[0]) *how = &profile_replies[r->reply];
	struct evbuffer *buf = NULL;
	uint8_t *data = NULL;
	char *text = NULL;
	size_t len = 0;
	int64_t cpu0;
	int err;

	cpu0 = server__cpu_ns();
	if (how->folded) {
		err = pprof__folded(p, value_index, "process_name", &text, &len);
		data = (uint8_t *)text;
	} else if (how->svg) {
		err = flamegraph__svg(p, value_index, &(struct flamegraph_opts){.title = title},
				      &text, &len);
		data = (uint8_t *)text;
	} else {
		err = pprof__encode(p, how->gzip, &data, &len);
	}
	if (!err)
		log__info("encoded %zu bytes in %.1f ms CPU", len, (server__cpu_ns() - cpu0) / 1e6);
	buf = evbuffer_new();
	if (err || !buf) {
		request__error(r, 500, "encoding the profile failed: %s",
			       strerror(err ? -err : ENOMEM));
		goto cleanup;
	}
	/* The buffer frees data once it is written. */
	if (evbuffer_add_reference(buf, data, len, free_encoded, NULL)) {
		request__error(r, 500, "out of memory");
		goto cleanup;
	}
	data = NULL;
	if (how->disposition)
		evhttp_add_header(evhttp_request_get_output_headers(r->req), "Content-Disposition",
				  how->disposition);
	request__reply(r, 200, how->content_type, buf);
cleanup:
	if (buf)
		evbuffer_free(buf);
	free(data);
	pprof__free(p);
}

static void on_session_done(struct session *s, void *ctx)
{
	struct request *r = ctx;
	struct pprof *p = NULL;
	int err;

	if (r->srv->post == r)
		r->srv->post = NULL;
	if (r->cancelled) {
		session__free(s);
		r->session = NULL;
		request__reply(r, 204, NULL, NULL);
		return;
	}
	err = session__pprof(s, &p);
	session__free(s);
	r->session = NULL;
	if (err) {
		request__error(r, 500, "building the profile failed: %s", strerror(-err));
		pprof__free(p);
		return;
	}
	request__send_profile(r, p, 0, "CPU flamegraph");
}

/*
 * The client hung up while its profile was being taken (the connection's
 * closecb).  Nobody wants the profile any more: free the session now
 * rather than keep its perf events running.
 */
static void on_client_gone(struct evhttp_connection *evcon, void *arg)
{
	struct request *r = arg;
	struct server *srv = r->srv;

	request__stop_waiting(r);
	session__free(r->session);
	r->session = NULL;
	if (!srv->freeing)
		request__log(r, SERVER_CLIENT_GONE);
	/* libevent >= 2.2 notices hangups itself and leaves the request to us. */
	if (!evhttp_request_get_connection(r->req))
		evhttp_request_free(r->req);
	free(r);
	server__check_drained(srv);
}

/*
 * Start r's session and park r until it ends.  own_targets: the targets
 * came with the request, so a bad one is the client's error (422), not
 * the server's (500).  On failure r has been answered.
 */
static int request__start_session(struct request *r, int frequency, int seconds,
				  struct targets targets, bool own_targets)
{
	struct server *srv = r->srv;
	struct evhttp_connection *evcon;
	char errbuf[256] = "";
	int err;

	err = sampler__start(srv->sm,
			     &(struct session_opts){
				     .frequency = frequency,
				     .seconds = seconds,
				     .targets = targets,
				     .done = on_session_done,
				     .ctx = r,
			     },
			     &r->session, errbuf, sizeof(errbuf));
	if (err == -EBUSY) {
		request__error(r, 503, "%s", errbuf);
		return err;
	}
	if (err && own_targets && (err == -ESRCH || err == -ENOENT || err == -EINVAL)) {
		request__error(r, 422, "targets: %s", errbuf);
		return err;
	}
	if (err) {
		request__error(r, 500, "cannot start profiling: %s", errbuf);
		return err;
	}
	r->next = srv->pending;
	if (srv->pending)
		srv->pending->prev = r;
	srv->pending = r;
	evcon = evhttp_request_get_connection(r->req);
	if (evcon)
		evhttp_connection_set_closecb(evcon, on_client_gone, r);
	r->watch = http__watch_peer(r->req);
	return 0;
}

/* POST /profile/cpu's body. */
struct post_args {
	int frequency;
	int seconds;
	bool archive;
	struct target_list targets;	/* empty: the server's defaults */
};

/* An optional integer field; json_type_int only, so 1.5, "99" and true fail. */
static int json_int_field(struct json_object *root, const char *name, int64_t min, int64_t max,
			  int *out, char *errbuf, size_t errlen)
{
	struct json_object *o;
	int64_t v = 0;

	if (!json_object_object_get_ex(root, name, &o))
		return 0;
	/* Integers past int64 come back clamped, so they fail the range check. */
	if (json_object_is_type(o, json_type_int))
		v = json_object_get_int64(o);
	if (!json_object_is_type(o, json_type_int) || v < min || v > max) {
		snprintf(errbuf, errlen, "%s must be an integer %" PRId64 "..%" PRId64, name, min,
			 max);
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

/* compute_ctl's serde enum, externally tagged: {"BccProfile": null | "path"}
 * or {"Perf": null | "path"}.  Both profile with BPF; the path is unused. */
static int json_profiler_field(struct json_object *root, char *errbuf, size_t errlen)
{
	struct json_object *o;

	if (!json_object_object_get_ex(root, "profiler", &o) || !o) {
		snprintf(errbuf, errlen,
			 "profiler is required: {\"BccProfile\": null} or {\"Perf\": null}");
		return -EINVAL;
	}
	if (!json_object_is_type(o, json_type_object) || json_object_object_length(o) != 1) {
		snprintf(errbuf, errlen, "profiler must be {\"BccProfile\": null|\"path\"} or "
			 "{\"Perf\": null|\"path\"}");
		return -EINVAL;
	}
	json_object_object_foreach(o, key, val) {
		if (strcmp(key, "BccProfile") && strcmp(key, "Perf")) {
			snprintf(errbuf, errlen,
				 "profiler: unknown variant \"%.64s\", expected BccProfile or Perf",
				 key);
			return -EINVAL;
		}
		if (val && !json_object_is_type(val, json_type_string)) {
			snprintf(errbuf, errlen, "profiler.%s must be null or a path", key);
			return -EINVAL;
		}
	}
	return 0;
}

static int json_targets_field(struct json_object *root, struct target_list *tl, char *errbuf,
			      size_t errlen)
{
	struct json_object *o;
	int err = 0;

	if (!json_object_object_get_ex(root, "targets", &o) || !o)
		return 0;
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(errbuf, errlen, "targets must be {\"pids\": [...], \"exes\": [...]}");
		return -EINVAL;
	}
	json_object_object_foreach(o, key, val) {
		if (!strcmp(key, "pids")) {
			err = config__json_pids(tl, val, "targets.pids", errbuf, errlen);
		} else if (!strcmp(key, "exes")) {
			err = config__json_exes(tl, val, "targets.exes", errbuf, errlen);
		} else {
			snprintf(errbuf, errlen, "targets: unknown field \"%.64s\", expected pids "
				 "or exes", key);
			err = -EINVAL;
		}
		if (err)
			return err;
	}
	if (!tl->npids && !tl->nexes) {
		snprintf(errbuf, errlen, "targets must name at least one pid or exe");
		return -EINVAL;
	}
	return 0;
}

/* Unknown fields are ignored, as serde does by default. */
static int post_args__parse(struct json_object *root, struct post_args *a, char *errbuf,
			    size_t errlen)
{
	struct json_object *o;
	int err;

	if (!json_object_is_type(root, json_type_object)) {
		snprintf(errbuf, errlen, "the body must be a JSON object");
		return -EINVAL;
	}
	err = json_profiler_field(root, errbuf, errlen);
	err = err ?: json_int_field(root, "sampling_frequency", SAMPLER_MIN_FREQ,
				    SAMPLER_MAX_FREQ, &a->frequency, errbuf, errlen);
	err = err ?: json_int_field(root, "timeout_seconds", 1, POST_MAX_SECONDS, &a->seconds,
				    errbuf, errlen);
	if (err)
		return err;
	if (json_object_object_get_ex(root, "archive", &o)) {
		if (!json_object_is_type(o, json_type_boolean)) {
			snprintf(errbuf, errlen, "archive must be a boolean");
			return -EINVAL;
		}
		a->archive = json_object_get_boolean(o);
	}
	return json_targets_field(root, &a->targets, errbuf, errlen);
}

/*
 * json-c accepts more than JSON, even with JSON_TOKENER_STRICT: single
 * quotes, NaN and Infinity, raw control characters in strings.  A client
 * relying on those would break against any other server, so refuse them
 * here: outside strings only JSON's punctuation, numbers and the letters of
 * true/false/null may appear.
 */
static bool json_lexically_strict(const char *text, size_t len)
{
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = text[i];

		if (in_string) {
			if (c < 0x20)
				return false;
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if (!c || !strchr(" \t\r\n{}[],:-+.0123456789eEtruefalsn", c)) {
			return false;
		}
	}
	return true;
}

/* Strict JSON, all of the body: trailing garbage is malformed too. */
static struct json_object *parse_json(const char *text, size_t len, char *errbuf, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o = NULL;
	enum json_tokener_error jerr;
	size_t end;

	if (!tok) {
		snprintf(errbuf, errlen, "out of memory");
		return NULL;
	}
	if (!json_lexically_strict(text, len)) {
		snprintf(errbuf, errlen, "malformed JSON: not strict JSON (RFC 8259)");
		json_tokener_free(tok);
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	/* len + 1 takes the terminating NUL, which ends a bare top-level number. */
	o = json_tokener_parse_ex(tok, text, (int)len + 1);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (!o || jerr != json_tokener_success) {
		snprintf(errbuf, errlen, "malformed JSON: %s",
			 jerr == json_tokener_success || jerr == json_tokener_continue ?
				 "unexpected end of input" : json_tokener_error_desc(jerr));
		json_object_put(o);
		o = NULL;
	} else if (end < len && text[end + strspn(text + end, " \t\r\n")]) {
		snprintf(errbuf, errlen, "malformed JSON: unexpected data after the value");
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

static void on_profile_post(struct request *r)
{
	struct server *srv = r->srv;
	struct post_args a = {.frequency = POST_DEFAULT_FREQ, .seconds = POST_DEFAULT_SECONDS};
	struct json_object *root = NULL;
	bool own_targets;
	char errbuf[256];
	char *text = NULL;
	size_t len;
	int err;

	if (!http__content_type_is(r->req, "application/json")) {
		request__error(r, 415, "Content-Type must be application/json");
		goto cleanup;
	}
	err = http__body(r->req, SERVER_MAX_BODY, &text, &len);
	if (err == -E2BIG) {
		request__error(r, 413, "the body is larger than %d bytes", SERVER_MAX_BODY);
		goto cleanup;
	}
	if (err) {
		request__error(r, 500, "cannot read the body: %s", strerror(-err));
		goto cleanup;
	}
	root = parse_json(text, len, errbuf, sizeof(errbuf));
	if (!root) {
		request__error(r, 400, "%s", errbuf);
		goto cleanup;
	}
	if (post_args__parse(root, &a, errbuf, sizeof(errbuf))) {
		request__error(r, 422, "%s", errbuf);
		goto cleanup;
	}
	if (srv->post) {
		request__reply_string(r, 409, MSG_ALREADY_RUNNING);
		goto cleanup;
	}
	own_targets = a.targets.npids || a.targets.nexes;
	r->reply = a.archive ? REPLY_POST_GZIP : REPLY_POST_RAW;
	/* The sampler copies the targets, so a.targets may go right after. */
	if (!request__start_session(r, a.frequency, a.seconds,
				    own_targets ? target_list__targets(&a.targets) : srv->targets,
				    own_targets))
		srv->post = r;
cleanup:
	target_list__free(&a.targets);
	json_object_put(root);
	free(text);
}

static void on_profile_status(struct request *r)
{
	if (r->srv->post)
		request__reply_string(r, 200, MSG_IN_PROGRESS);
	else
		request__reply(r, 204, NULL, NULL);
}

static void on_profile_stop(struct request *r)
{
	struct request *post = r->srv->post;

	if (!post) {
		request__reply_string(r, 412, MSG_NOT_RUNNING);
		return;
	}
	/* The POST answers 204 from its done callback, after this reply. */
	post->cancelled = true;
	r->srv->post = NULL;
	session__stop(post->session);
	request__reply_string(r, 200, MSG_STOPPED);
}

/* A strict integer query parameter, default when absent. */
static int query_int(struct request *r, const struct evkeyvalq *q, const char *name, long min,
		     long max, long *out)
{
	const char *v;

	if (http__query_get(q, name, &v)) {
		request__error(r, 400, "%s is given more than once with different values", name);
		return -EINVAL;
	}
	if (v && cli__parse_int(v, min, max, out)) {
		request__error(r, 400, "%s must be an integer %ld..%ld", name, min, max);
		return -EINVAL;
	}
	return 0;
}

/*
 * Go's net/http/pprof CPU endpoint, for `go tool pprof` and Grafana Alloy's
 * pyroscope.scrape.  Each request is its own session: scrapes never cancel
 * each other or the POST session (force=true is accepted for that reason
 * and changes nothing).
 */
static void on_pprof_profile(struct request *r)
{
	struct evkeyvalq q;
	const struct evkeyval *kv;
	long seconds = SCRAPE_DEFAULT_SECONDS, freq = SCRAPE_DEFAULT_FREQ;
	const char *format, *force;
	int n = 0;

	if (http__query_parse(r->req, &q)) {
		request__error(r, 400, "malformed query string");
		goto cleanup;
	}
	TAILQ_FOREACH(kv, &q, next)
		n++;
	if (n > SERVER_MAX_QUERY_PARAMS) {
		request__error(r, 400, "more than %d query parameters", SERVER_MAX_QUERY_PARAMS);
		goto cleanup;
	}
	if (query_int(r, &q, "seconds", 1, SCRAPE_MAX_SECONDS, &seconds) ||
	    query_int(r, &q, "frequency", SAMPLER_MIN_FREQ, SAMPLER_MAX_FREQ, &freq))
		goto cleanup;
	if (http__query_get(&q, "format", &format) || http__query_get(&q, "force", &force)) {
		request__error(r, 400, "format and force may not be repeated with different "
			       "values");
		goto cleanup;
	}
	if (request__set_format(r, format))
		goto cleanup;
	request__start_session(r, (int)freq, (int)seconds, r->srv->targets, false);
cleanup:
	evhttp_clear_headers(&q);
}

/* format= of the GET profile routes; answers 400 and returns -1 if bad. */
static int request__set_format(struct request *r, const char *format)
{
	if (!format || !strcmp(format, "pprof"))
		r->reply = REPLY_SCRAPE_PPROF;
	else if (!strcmp(format, "folded"))
		r->reply = REPLY_SCRAPE_FOLDED;
	else if (!strcmp(format, "svg"))
		r->reply = REPLY_SCRAPE_SVG;
	else {
		request__error(r, 400, "format must be pprof, folded or svg");
		return -1;
	}
	return 0;
}

/*
 * The heap now: Go's four heap sample types.  /debug/pprof/allocs is the
 * same profile with alloc_space as its default type, as Go serves it.
 */
static void on_heap(struct request *r)
{
	bool allocs = !strcmp(routes[r->route].path, "/debug/pprof/allocs");
	struct evkeyvalq q;
	struct pprof *p = NULL;
	const char *format;
	int err;

	if (!r->srv->heap) {
		request__error(r, 409, "heap profiling is off: start the daemon with "
				       "`profd serve --heap` (see docs/api.md)");
		return;
	}
	if (http__query_parse(r->req, &q)) {
		request__error(r, 400, "malformed query string");
		return;
	}
	if (http__query_get(&q, "format", &format)) {
		request__error(r, 400, "format may not be repeated with different values");
		goto cleanup;
	}
	if (request__set_format(r, format))
		goto cleanup;
	err = heap__pprof(r->srv->heap, allocs ? "alloc_space" : "inuse_space", &p);
	if (err) {
		request__error(r, 500, "building the heap profile failed: %s", strerror(-err));
		goto cleanup;
	}
	/* Value 3 is inuse_space, 1 alloc_space. */
	request__send_profile(r, p, allocs ? 1 : 3, allocs ? "Heap allocations (bytes)" :
							      "Heap in use (bytes)");
cleanup:
	evhttp_clear_headers(&q);
}

static void on_health(struct request *r)
{
	struct server *srv = r->srv;
	struct sampler_stats st;
	struct json_object *o = json_object_new_object();

	sampler__stats(srv->sm, &st);
	if (o && (json_object_object_add(o, "status", json_object_new_string("ok")) ||
		  json_object_object_add(o, "profiling_in_progress",
					 json_object_new_boolean(srv->post != NULL)) ||
		  json_object_object_add(o, "sessions_running",
					 json_object_new_int(st.sessions_running)) ||
		  json_object_object_add(o, "uptime_seconds",
					 json_object_new_int64((now_ns() - srv->start_ns) /
							       1000000000LL)))) {
		json_object_put(o);
		o = NULL;
	}
	request__reply_json(r, 200, o);
}

static void on_metrics(struct request *r)
{
	static const char *const help[][3] = {
		{"profd_samples_total", "counter", "CPU samples received"},
		{"profd_samples_lost_total", "counter",
		 "Samples dropped because a buffer or table was full"},
		{"profd_sessions_running", "gauge", "Profiling sessions running"},
		{"profd_sessions_started_total", "counter", "Profiling sessions started"},
		{"profd_symbolizer_cache_bytes", "gauge",
		 "Estimated bytes held by the symbol cache"},
		{"profd_processes_tracked", "gauge", "Processes whose memory maps profd holds"},
	};
	struct server *srv = r->srv;
	struct evbuffer *buf = evbuffer_new();
	struct sampler_stats st;
	uint64_t values[6];
	int err = !buf;

	sampler__stats(srv->sm, &st);
	values[0] = st.samples;
	values[1] = st.lost;
	values[2] = (uint64_t)st.sessions_running;
	values[3] = st.sessions_started;
	values[4] = st.symbolizer_bytes;
	values[5] = st.procs_tracked;
	for (size_t i = 0; !err && i < sizeof(help) / sizeof(help[0]); i++)
		err = evbuffer_add_printf(buf, "# HELP %s %s.\n# TYPE %s %s\n%s %" PRIu64 "\n",
					  help[i][0], help[i][2], help[i][0], help[i][1],
					  help[i][0], values[i]) < 0;
	if (!err)
		err = evbuffer_add_printf(buf, "# HELP profd_http_requests_total HTTP requests "
					  "answered, by route and status code.\n"
					  "# TYPE profd_http_requests_total counter\n") < 0;
	for (int i = 0; !err && i < srv->ncounters; i++) {
		const struct counter *c = &srv->counters[i];

		err = evbuffer_add_printf(buf, "%s{route=\"%s\",code=\"%d\"} %" PRIu64 "\n",
					  "profd_http_requests_total", c->route, c->code, c->n) < 0;
	}
	if (err)
		request__error(r, 500, "out of memory");
	else
		request__reply(r, 200, "text/plain; version=0.0.4; charset=utf-8", buf);
	if (buf)
		evbuffer_free(buf);
}

/* The page: static, self-contained, allowed nothing from elsewhere. */
static void on_index(struct request *r)
{
	struct evkeyvalq *headers = evhttp_request_get_output_headers(r->req);
	struct evbuffer *buf = evbuffer_new();
	size_t len;
	const char *html = page__index(&len);

	/* Flamegraphs show in sandboxed frames from blob: URLs (see page.html). */
	evhttp_add_header(headers, "Content-Security-Policy",
			  "default-src 'self'; script-src 'unsafe-inline'; "
			  "style-src 'unsafe-inline'; frame-src blob:; img-src 'self' data: blob:");
	if (!buf || evbuffer_add_reference(buf, html, len, NULL, NULL))
		request__error(r, 500, "out of memory");
	else
		request__reply(r, 200, "text/html; charset=utf-8", buf);
	if (buf)
		evbuffer_free(buf);
}

/* Add v to object o or array o (key NULL); v is o's or freed, even on failure. */
static int json_add(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v || (key ? json_object_object_add(o, key, v) : json_object_array_add(o, v))) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

/* {"pids": [...], "exes": [...]}; both empty is the whole system. */
static int targets_json(struct json_object *o, const struct targets *t)
{
	struct json_object *pids = json_object_new_array(), *exes = json_object_new_array();
	int err;

	err = json_add(o, "pids", pids);
	if (err) {
		json_object_put(exes);
		return err;
	}
	err = json_add(o, "exes", exes);
	for (size_t i = 0; !err && i < t->npids; i++)
		err = json_add(pids, NULL, json_object_new_int(t->pids[i]));
	for (size_t i = 0; !err && i < t->nexes; i++)
		err = json_add(exes, NULL, json_object_new_string(t->exes[i]));
	return err;
}

/* The page's view of the daemon: its default targets and the sessions running. */
static void on_sessions(struct request *r)
{
	struct json_object *o = json_object_new_object();
	struct json_object *targets = json_object_new_object();
	struct json_object *list = json_object_new_array();
	struct json_object *s;
	struct session_stats st;
	int err;

	if (!o) {
		json_object_put(targets);
		json_object_put(list);
		request__error(r, 500, "out of memory");
		return;
	}
	/* From here o owns everything added to it, and freeing o frees it all. */
	err = json_add(o, "targets", targets);
	err = err ?: targets_json(targets, &r->srv->targets);
	if (err)
		json_object_put(list);
	else
		err = json_add(o, "sessions", list);
	for (struct request *q = r->srv->pending; !err && q; q = q->next) {
		if (!q->session)
			continue;
		session__stats(q->session, &st);
		s = json_object_new_object();
		err = json_add(list, NULL, s);
		err = err ?: json_add(s, "route", json_object_new_string(request__route_label(q)));
		err = err ?: json_add(s, "method", json_object_new_string(http__method_name(
						evhttp_request_get_command(q->req))));
		err = err ?: json_add(s, "frequency", json_object_new_int(st.frequency));
		err = err ?: json_add(s, "started_unix",
				      json_object_new_int64(st.start_ns / 1000000000LL));
		err = err ?: json_add(s, "elapsed_seconds",
				      json_object_new_double(st.duration_ns / 1e9));
		err = err ?: json_add(s, "samples", json_object_new_int64((int64_t)st.samples));
	}
	if (err) {
		json_object_put(o);
		request__error(r, 500, "out of memory");
		return;
	}
	request__reply_json(r, 200, o);
}

static void server__dispatch(struct evhttp_request *req, void *arg)
{
	struct server *srv = arg;
	const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
	enum evhttp_cmd_type method = evhttp_request_get_command(req);
	struct request *r = calloc(1, sizeof(*r));
	char allow[64] = "";
	int match = -1;

	if (!r) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	r->srv = srv;
	r->req = req;
	r->route = -1;
	r->start_ns = now_ns();
	for (int i = 0; path && routes[i].path; i++) {
		if (strcmp(routes[i].path, path))
			continue;
		r->route = i;
		if (routes[i].method == method) {
			match = i;
			break;
		}
		snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), "%s%s",
			 *allow ? ", " : "", http__method_name(routes[i].method));
	}
	if (srv->closing) {
		request__error(r, 503, "profd is shutting down");
	} else if (match >= 0) {
		routes[match].fn(r);
	} else if (r->route >= 0) {
		for (int i = r->route + 1; routes[i].path; i++)
			if (!strcmp(routes[i].path, path))
				snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow),
					 ", %s", http__method_name(routes[i].method));
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", allow);
		request__error(r, 405, "%s is not allowed on %s (allowed: %s)",
			       http__method_name(method), path, allow);
	} else {
		request__error(r, 404, "no such route: %.200s", path ? path : "");
	}
}

int server__new(struct event_base *base, struct sampler *sm, const struct server_opts *opts,
		struct server **out)
{
	struct server *srv = calloc(1, sizeof(*srv));
	int err = 0;

	if (!srv)
		return -ENOMEM;
	srv->base = base;
	srv->sm = sm;
	srv->targets = opts->targets;
	srv->heap = opts->heap;
	srv->start_ns = now_ns();
	srv->http = evhttp_new(base);
	srv->drain_ev = event_new(base, -1, 0, on_drained, srv);
	srv->deadline_ev = evtimer_new(base, on_drain_deadline, srv);
	if (!srv->http || !srv->drain_ev || !srv->deadline_ev) {
		err = -ENOMEM;
		log__error("out of memory setting up the HTTP server");
		goto cleanup;
	}
	evhttp_set_max_headers_size(srv->http, SERVER_MAX_HEADERS);
	evhttp_set_max_body_size(srv->http, SERVER_EVHTTP_MAX_BODY);
	evhttp_set_timeout(srv->http, SERVER_IO_TIMEOUT_S);
	/* Let every method through, so wrong ones get our JSON 405 with Allow. */
	evhttp_set_allowed_methods(srv->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
				   EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
				   EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(srv->http, server__dispatch, srv);
	errno = 0;
	srv->bound = evhttp_bind_socket_with_handle(srv->http, opts->host, opts->port);
	if (!srv->bound) {
		err = errno ? -errno : -EADDRNOTAVAIL;
		log__error("cannot listen on %s:%d: %s", opts->host, opts->port, strerror(-err));
		goto cleanup;
	}
	*out = srv;
	return 0;
cleanup:
	server__free(srv);
	return err;
}

void server__shutdown(struct server *srv, void (*drained)(void *ctx), void *ctx)
{
	struct timeval tv = {SERVER_DRAIN_TIMEOUT_S, 0};
	int n = 0;

	srv->closing = true;
	srv->drained = drained;
	srv->drained_ctx = ctx;
	if (srv->bound) {
		evhttp_del_accept_socket(srv->http, srv->bound);
		srv->bound = NULL;
	}
	srv->post = NULL;
	/* Each stop queues that session's done callback, which replies. */
	for (struct request *r = srv->pending; r; r = r->next, n++)
		session__stop(r->session);
	if (n)
		log__info("stopping %d profiling session%s early", n, n == 1 ? "" : "s");
	evtimer_add(srv->deadline_ev, &tv);
	server__check_drained(srv);
}

void server__free(struct server *srv)
{
	if (!srv)
		return;
	srv->freeing = true;
	/* Closing the connections runs their closecbs, which free sessions. */
	if (srv->http)
		evhttp_free(srv->http);
	while (srv->pending) {
		struct request *r = srv->pending;

		request__unlink(r);
		http__unwatch_peer(r->watch);
		session__free(r->session);
		free(r);
	}
	if (srv->drain_ev)
		event_free(srv->drain_ev);
	if (srv->deadline_ev)
		event_free(srv->deadline_ev);
	free(srv);
}
