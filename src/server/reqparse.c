// SPDX-License-Identifier: BSD-2-Clause
/*
 * reqparse: strict JSON, the compute API's body, strict query integers (the contract:
 * reqparse.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <json-c/json.h>

#include "cpu/sampler.h"
#include "lib/parse.h"
#include "profile/labels.h"
#include "server/config.h"
#include "server/reqparse.h"

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

struct json_object *reqparse__json(const char *text, size_t len, char *errbuf, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *o = NULL;
	enum json_tokener_error jerr;
	size_t end;

	if (len > INT32_MAX - 1) {
		snprintf(errbuf, errlen, "the body is too large");
		return NULL;
	}
	if (!json_lexically_strict(text, len)) {
		snprintf(errbuf, errlen, "malformed JSON: not strict JSON (RFC 8259)");
		return NULL;
	}
	tok = json_tokener_new();
	if (!tok) {
		snprintf(errbuf, errlen, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	/* len + 1 takes the terminating NUL, which ends a bare top-level number:
	 * callers pass NUL-terminated text. */
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

/*
 * compute_ctl's serde enum, externally tagged: {"VARIANT": null | "path"}.
 * Its two, BccProfile and Perf, both profile CPU time with BPF; profd's
 * OffCpu and Wall take off-CPU and wall-clock profiles.  The path is
 * unused.
 */
static const struct {
	const char *name;
	enum session_kind kind;
} profilers[] = {
	{"BccProfile", SESSION_CPU},
	{"Perf", SESSION_CPU},
	{"OffCpu", SESSION_OFFCPU},
	{"Wall", SESSION_WALL},
};

#define PROFILERS "BccProfile, Perf, OffCpu or Wall"

static int json_profiler_field(struct json_object *root, enum session_kind *kind, char *errbuf,
			       size_t errlen)
{
	struct json_object *o;
	size_t i, n = sizeof(profilers) / sizeof(profilers[0]);

	if (!json_object_object_get_ex(root, "profiler", &o) || !o) {
		snprintf(errbuf, errlen, "profiler is required: {\"VARIANT\": null}, the variant "
			 PROFILERS);
		return -EINVAL;
	}
	if (!json_object_is_type(o, json_type_object) || json_object_object_length(o) != 1) {
		snprintf(errbuf, errlen, "profiler must be {\"VARIANT\": null|\"path\"}, the "
			 "variant " PROFILERS);
		return -EINVAL;
	}
	json_object_object_foreach(o, key, val) {
		for (i = 0; i < n && strcmp(key, profilers[i].name); i++)
			;
		if (i == n) {
			snprintf(errbuf, errlen,
				 "profiler: unknown variant \"%.64s\", expected " PROFILERS, key);
			return -EINVAL;
		}
		if (val && !json_object_is_type(val, json_type_string)) {
			snprintf(errbuf, errlen, "profiler.%s must be null or a path", key);
			return -EINVAL;
		}
		*kind = profilers[i].kind;
	}
	return 0;
}

static int json_targets_field(struct json_object *root, struct targets *t, char *errbuf,
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
			err = config__json_pids(t, val, "targets.pids", errbuf, errlen);
		} else if (!strcmp(key, "exes")) {
			err = config__json_exes(t, val, "targets.exes", errbuf, errlen);
			t->from_client = true;
		} else {
			snprintf(errbuf, errlen, "targets: unknown field \"%.64s\", expected pids "
				 "or exes", key);
			err = -EINVAL;
		}
		if (err)
			return err;
	}
	if (targets__whole_system(t)) {
		snprintf(errbuf, errlen, "targets must name at least one pid or exe");
		return -EINVAL;
	}
	return 0;
}

int reqparse__post_args(struct json_object *root, int max_seconds, struct post_args *a,
			char *errbuf, size_t errlen)
{
	struct json_object *o;
	int err;

	if (!json_object_is_type(root, json_type_object)) {
		snprintf(errbuf, errlen, "the body must be a JSON object");
		return -EINVAL;
	}
	err = json_profiler_field(root, &a->kind, errbuf, errlen);
	err = err ?: json_int_field(root, "sampling_frequency", SAMPLER_MIN_FREQ,
				    SAMPLER_MAX_FREQ, &a->frequency, errbuf, errlen);
	err = err ?: json_int_field(root, "timeout_seconds", 1, max_seconds, &a->seconds, errbuf,
				    errlen);
	if (err)
		return err;
	if (json_object_object_get_ex(root, "archive", &o)) {
		if (!json_object_is_type(o, json_type_boolean)) {
			snprintf(errbuf, errlen, "archive must be a boolean");
			return -EINVAL;
		}
		a->archive = json_object_get_boolean(o);
	}
	if (json_object_object_get_ex(root, "labels", &o)) {
		if (!json_object_is_type(o, json_type_string)) {
			snprintf(errbuf, errlen, "labels must be a string such as \"default,pid\"");
			return -EINVAL;
		}
		if (labels__parse(json_object_get_string(o), &a->labels, errbuf, errlen))
			return -EINVAL;
	}
	return json_targets_field(root, &a->targets, errbuf, errlen);
}

int reqparse__query(const char *query, size_t max_params, struct evkeyvalq *q)
{
	const struct evkeyval *kv;
	size_t n = 0;

	TAILQ_INIT(q);
	if (!query || !*query)
		return 0;
	/* %00 would decode to a NUL and cut the value short unseen: "1%00" is not 1. */
	for (const char *p = query; (p = strchr(p, '%')); p++)
		if (p[1] == '0' && p[2] == '0')
			return -EINVAL;
	if (evhttp_parse_query_str(query, q))
		return -EINVAL;
	TAILQ_FOREACH(kv, q, next)
		n++;
	return n > max_params ? -E2BIG : 0;
}

int reqparse__query_str(const struct evkeyvalq *q, const char *name, const char **out,
			char *errbuf, size_t errlen)
{
	const struct evkeyval *kv;

	*out = NULL;
	TAILQ_FOREACH(kv, q, next) {
		if (strcmp(kv->key, name))
			continue;
		if (*out && strcmp(*out, kv->value)) {
			snprintf(errbuf, errlen, "%s is given more than once with different values",
				 name);
			return -EINVAL;
		}
		*out = kv->value;
	}
	return 0;
}

int reqparse__query_int(const struct evkeyvalq *q, const char *name, long min, long max,
			long *out, char *errbuf, size_t errlen)
{
	const char *v;
	int err = reqparse__query_str(q, name, &v, errbuf, errlen);

	if (err)
		return err;
	if (v && parse__int(v, min, max, out)) {
		snprintf(errbuf, errlen, "%s must be an integer %ld..%ld", name, min, max);
		return -EINVAL;
	}
	return 0;
}
