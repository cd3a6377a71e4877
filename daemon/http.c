// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "daemon/http.h"

struct http_peer_watch {
	struct event *ev;
	struct evhttp_connection *evcon;
};

const char *http__reason(int code)
{
	static const struct {
		int code;
		const char *text;
	} reasons[] = {
		{200, "OK"},
		{204, "No Content"},
		{400, "Bad Request"},
		{404, "Not Found"},
		{405, "Method Not Allowed"},
		{409, "Conflict"},
		{412, "Precondition Failed"},
		{413, "Payload Too Large"},
		{415, "Unsupported Media Type"},
		{422, "Unprocessable Entity"},
		{500, "Internal Server Error"},
		{503, "Service Unavailable"},
		{0, NULL},
	};

	for (int i = 0; reasons[i].text; i++)
		if (reasons[i].code == code)
			return reasons[i].text;
	return code < 400 ? "OK" : code < 500 ? "Client Error" : "Server Error";
}

const char *http__method_name(enum evhttp_cmd_type method)
{
	switch (method) {
	case EVHTTP_REQ_GET: return "GET";
	case EVHTTP_REQ_POST: return "POST";
	case EVHTTP_REQ_HEAD: return "HEAD";
	case EVHTTP_REQ_PUT: return "PUT";
	case EVHTTP_REQ_DELETE: return "DELETE";
	case EVHTTP_REQ_OPTIONS: return "OPTIONS";
	case EVHTTP_REQ_TRACE: return "TRACE";
	case EVHTTP_REQ_CONNECT: return "CONNECT";
	case EVHTTP_REQ_PATCH: return "PATCH";
	}
	return "?";
}

bool http__content_type_is(struct evhttp_request *req, const char *type)
{
	const char *ct = evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");
	size_t n = strlen(type);

	if (!ct)
		return false;
	ct += strspn(ct, " \t");
	if (strncasecmp(ct, type, n))
		return false;
	ct += n;
	ct += strspn(ct, " \t");
	return *ct == '\0' || *ct == ';';
}

int http__body(struct evhttp_request *req, size_t max, char **out, size_t *len)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t n = evbuffer_get_length(in);
	char *buf;

	if (n > max)
		return -E2BIG;
	buf = malloc(n + 1);
	if (!buf)
		return -ENOMEM;
	if (evbuffer_copyout(in, buf, n) != (ev_ssize_t)n) {
		free(buf);
		return -EIO;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int http__query_parse(struct evhttp_request *req, struct evkeyvalq *q)
{
	const char *query = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));

	TAILQ_INIT(q);
	if (!query || !*query)
		return 0;
	return evhttp_parse_query_str(query, q) ? -EINVAL : 0;
}

int http__query_get(const struct evkeyvalq *q, const char *name, const char **value)
{
	const struct evkeyval *kv;

	*value = NULL;
	TAILQ_FOREACH(kv, q, next) {
		if (strcmp(kv->key, name))
			continue;
		if (*value && strcmp(*value, kv->value))
			return -EINVAL;
		*value = kv->value;
	}
	return 0;
}

static void on_peer_readable(evutil_socket_t fd, short what, void *arg)
{
	struct http_peer_watch *w = arg;
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n > 0) {
		/* Bytes to read, not a hangup: evhttp reads them after the reply. */
		event_del(w->ev);
		return;
	}
	/* EOF or a reset.  This runs the closecb, which frees w: don't touch it after. */
	evhttp_connection_free(w->evcon);
}

struct http_peer_watch *http__watch_peer(struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct http_peer_watch *w;
	evutil_socket_t fd;

	if (!evcon)
		return NULL;
	fd = bufferevent_getfd(evhttp_connection_get_bufferevent(evcon));
	if (fd < 0)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->evcon = evcon;
	w->ev = event_new(evhttp_connection_get_base(evcon), fd, EV_READ | EV_PERSIST,
			  on_peer_readable, w);
	if (!w->ev || event_add(w->ev, NULL)) {
		http__unwatch_peer(w);
		return NULL;
	}
	return w;
}

void http__unwatch_peer(struct http_peer_watch *w)
{
	if (!w)
		return;
	if (w->ev)
		event_free(w->ev);
	free(w);
}
