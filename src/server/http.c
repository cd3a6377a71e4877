// SPDX-License-Identifier: BSD-2-Clause
/* http: small evhttp helpers (reasons, bodies, noticing a hang-up) (the contract: http.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/http_struct.h>

#include "server/http.h"

struct http_peer_watch {
	struct event *ev;
	struct event *check;		/* after a half-close: polls for a reset */
	struct evhttp_connection *evcon;
	struct evhttp_request *req;
	evutil_socket_t fd;
	bool half_closed;
};

const char *http__reason(int code)
{
	static const struct {
		int code;
		const char *text;
	} reasons[] = {
		{200, "OK"},
		{204, "No Content"},
		{301, "Moved Permanently"},
		{400, "Bad Request"},
		{403, "Forbidden"},
		{404, "Not Found"},
		{405, "Method Not Allowed"},
		{409, "Conflict"},
		{412, "Precondition Failed"},
		{413, "Payload Too Large"},
		{415, "Unsupported Media Type"},
		{421, "Misdirected Request"},
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

/* Bytes a client may send after its request while the reply is prepared
 * (kept for evhttp to read afterwards, as a pipelined request would be). */
#define HTTP_WATCH_MAX_PENDING (64 << 10)
/* How often a half-closed connection is checked for a reset. */
#define HTTP_WATCH_CHECK_MS 250

/* The client is gone.  This runs the closecb, which frees w: don't touch it after. */
static void peer_gone(struct http_peer_watch *w)
{
	evhttp_connection_free(w->evcon);
}

/* A half-closed connection: a reset means the client is gone after all. */
static void on_check(evutil_socket_t fd, short what, void *arg)
{
	struct http_peer_watch *w = arg;
	struct pollfd p = {.fd = w->fd};

	if (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP | POLLNVAL)))
		peer_gone(w);
}

/*
 * EOF: either the client closed its socket, or it only shut down its
 * sending side (shutdown(SHUT_WR)) and still waits for the reply; TCP
 * tells them apart only when something is sent.  An HTTP/1.1 client must
 * take an unasked-for 100 Continue before the reply (RFC 9110 15.2), and a
 * closed socket answers it with a reset, which on_check() notices.
 */
static void on_eof(struct http_peer_watch *w)
{
	static const char probe[] = "HTTP/1.1 100 Continue\r\n\r\n";
	struct timeval tv = {0, HTTP_WATCH_CHECK_MS * 1000};
	struct bufferevent *bev = evhttp_connection_get_bufferevent(w->evcon);
	struct evbuffer *in = bufferevent_get_input(bev);

	/* HTTP/1.0 has no 1xx; and bytes of evhttp's own must not be overtaken. */
	if (w->req->major != 1 || w->req->minor < 1 ||
	    evbuffer_get_length(bufferevent_get_output(bev)) ||
	    send(w->fd, probe, sizeof(probe) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) !=
		    (ssize_t)sizeof(probe) - 1) {
		peer_gone(w);
		return;
	}
	w->half_closed = true;
	event_del(w->ev);
	/*
	 * evhttp reads while it writes the reply, to notice a close, and would
	 * take this EOF for one.  A read high-water mark at what is buffered
	 * (one byte of padding if nothing is) keeps it from reading; the reply
	 * says Connection: close, so nothing buffered is parsed afterwards.
	 */
	evbuffer_unfreeze(in, 0);
	if (!evbuffer_get_length(in))
		evbuffer_add(in, "\n", 1);
	evbuffer_freeze(in, 0);
	bufferevent_setwatermark(bev, EV_READ, 0, evbuffer_get_length(in));
	w->check = event_new(evhttp_connection_get_base(w->evcon), -1, EV_PERSIST, on_check, w);
	if (w->check)
		event_add(w->check, &tv);
}

static void on_peer_readable(evutil_socket_t fd, short what, void *arg)
{
	struct http_peer_watch *w = arg;
	struct evbuffer *in = bufferevent_get_input(evhttp_connection_get_bufferevent(w->evcon));
	int n, err;

	/*
	 * Bytes after the request are read into evhttp's own buffer, where it
	 * finds them after the reply; reading on is what lets a later close
	 * be seen.  Past a bound the client is misbehaving: dropped.
	 */
	if (evbuffer_get_length(in) >= HTTP_WATCH_MAX_PENDING) {
		peer_gone(w);
		return;
	}
	/* A socket bufferevent keeps the end of its input frozen but for its own reads. */
	evbuffer_unfreeze(in, 0);
	n = evbuffer_read(in, fd, 4096);
	err = errno;
	evbuffer_freeze(in, 0);
	if (n > 0)
		return;
	if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK || err == EINTR))
		return;
	if (n == 0)
		on_eof(w);
	else
		peer_gone(w);
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
	w->req = req;
	w->fd = fd;
	w->ev = event_new(evhttp_connection_get_base(evcon), fd, EV_READ | EV_PERSIST,
			  on_peer_readable, w);
	if (!w->ev || event_add(w->ev, NULL)) {
		http__unwatch_peer(w);
		return NULL;
	}
	return w;
}

bool http__peer_half_closed(const struct http_peer_watch *w)
{
	return w && w->half_closed;
}

void http__unwatch_peer(struct http_peer_watch *w)
{
	if (!w)
		return;
	if (w->ev)
		event_free(w->ev);
	if (w->check)
		event_free(w->check);
	free(w);
}

bool http__host_allowed(const char *host, const char *const *names)
{
	char name[256], addr[sizeof(struct in6_addr)];
	const char *end;
	size_t len;

	if (!host)
		return true;
	if (*host == '[') {
		/* [IPv6]:port: only an address can be bracketed. */
		end = strchr(host, ']');
		len = end ? (size_t)(end - host - 1) : 0;
		if (!end || !len || len >= sizeof(name) ||
		    (end[1] && (end[1] != ':' || !end[2] ||
				strspn(end + 2, "0123456789") != strlen(end + 2))))
			return false;
		memcpy(name, host + 1, len);
		name[len] = '\0';
		return inet_pton(AF_INET6, name, addr) == 1;
	}
	end = strchr(host, ':');
	if (end && (!end[1] || strspn(end + 1, "0123456789") != strlen(end + 1)))
		return false;	/* a port is digits */
	len = end ? (size_t)(end - host) : strlen(host);
	if (!len || len >= sizeof(name))
		return false;
	memcpy(name, host, len);
	name[len] = '\0';
	if (name[len - 1] == '.')
		name[--len] = '\0';
	if (!len)
		return false;
	if (inet_pton(AF_INET, name, addr) == 1)
		return true;
	for (; names && *names; names++)
		if (!strcasecmp(name, *names))
			return true;
	return false;
}
