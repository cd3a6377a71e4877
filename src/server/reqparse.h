/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reqparse: what clients send, checked strictly: request bodies as JSON
 * (RFC 8259, nothing json-c would also take), the compute API's POST body,
 * and query-string integers.  Pure functions, unit-tested and fuzzed.
 */
#ifndef PROFD_REQPARSE_H
#define PROFD_REQPARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "cpu/sampler.h"
#include "tracer/targets.h"

struct json_object;
struct evkeyvalq;

/* Strict JSON, all of text[0..len): trailing garbage is malformed too.
 * NULL with errbuf saying why. */
struct json_object *reqparse__json(const char *text, size_t len, char *errbuf, size_t errlen);

/* POST /profile/cpu's body, as compute_ctl sends it. */
struct post_args {
	enum session_kind kind;	/* by "profiler"'s variant */
	int frequency;		/* set to the default before parsing; unused off CPU */
	int seconds;
	bool archive;
	struct targets targets;	/* empty: the server's defaults */
	unsigned labels;	/* set to the default before parsing (profile/labels.h) */
};

/* Unknown fields are ignored, as serde does by default.  0 or -EINVAL. */
int reqparse__post_args(struct json_object *root, int max_seconds, struct post_args *a,
			char *errbuf, size_t errlen);

/*
 * Parse a raw query string into q (free with evhttp_clear_headers(), also
 * after a failure).  -EINVAL if malformed, if it has more than max_params
 * parameters, or if a value decodes to text with a NUL in it.
 */
int reqparse__query(const char *query, size_t max_params, struct evkeyvalq *q);

/*
 * Integer parameter name in [min, max], *out untouched when absent.  A
 * parameter may be repeated with the same value (some scrapers do);
 * different values are an error, since either choice would silently
 * ignore what the client asked.  -EINVAL with errbuf saying why.
 */
int reqparse__query_int(const struct evkeyvalq *q, const char *name, long min, long max,
			long *out, char *errbuf, size_t errlen);
/* A string parameter: NULL when absent; -EINVAL when repeated differently. */
int reqparse__query_str(const struct evkeyvalq *q, const char *name, const char **out,
			char *errbuf, size_t errlen);

#endif
