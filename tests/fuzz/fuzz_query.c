// SPDX-License-Identifier: BSD-2-Clause
/*
 * The query string of a GET route (/debug/pprof/profile, /profile/heap,
 * ...): reqparse__query, then the parameters the routes ask for.  The
 * input is the request's URI, as evhttp gets it from the request line; a
 * URI evhttp refuses is fed to reqparse__query as a raw query too.
 */
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/reqparse.h"

static void query(const char *text)
{
	struct evkeyvalq q;
	const char *s;
	char errbuf[160];
	long v;

	if (!reqparse__query(text, 16, &q)) {
		v = 30;
		reqparse__query_int(&q, "seconds", 1, 3600, &v, errbuf, sizeof(errbuf));
		reqparse__query_int(&q, "frequency", 1, 1000, &v, errbuf, sizeof(errbuf));
		reqparse__query_int(&q, "gc", 0, 1, &v, errbuf, sizeof(errbuf));
		reqparse__query_str(&q, "format", &s, errbuf, sizeof(errbuf));
		reqparse__query_str(&q, "force", &s, errbuf, sizeof(errbuf));
	}
	evhttp_clear_headers(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evhttp_uri *uri;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';	/* a request line has no NUL: the text ends at one */
	uri = evhttp_uri_parse_with_flags(text, 0);
	if (uri) {
		query(evhttp_uri_get_query(uri));
		evhttp_uri_free(uri);
	}
	query(text);
	free(text);
	return 0;
}
