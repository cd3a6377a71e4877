// SPDX-License-Identifier: BSD-2-Clause
/* What clients send: strict JSON, the compute API's body, query integers. */
#include <criterion/criterion.h>
#include <errno.h>
#include <criterion/parameterized.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <json-c/json.h>
#include <string.h>

#include "profile/labels.h"
#include "server/reqparse.h"

struct json_case {
	char text[96];
	bool ok;
};

ParameterizedTestParameters(reqparse, json)
{
	static struct json_case cases[] = {
		{"{}", true},
		{" {\"a\": [1, -2.5e3, true, false, null, \"x\\u0041\"]} \n", true},
		{"7", true},
		{"", false},
		{"{", false},
		{"{} {}", false},
		{"{'a': 1}", false},
		{"{\"a\": NaN}", false},
		{"{\"a\": Infinity}", false},
		{"{\"a\": \"tab\there\"}", false},
		{"[1,]", false},
		{"{\"a\":1,}", false},
		{"/* c */ {}", false},
	};
	return cr_make_param_array(struct json_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct json_case *c, reqparse, json)
{
	char err[128] = "";
	struct json_object *o = reqparse__json(c->text, strlen(c->text), err, sizeof(err));

	cr_assert_eq(o != NULL, c->ok, "'%s': %s", c->text, err);
	if (!c->ok)
		cr_assert(strstr(err, "JSON"), "'%s' explains itself: %s", c->text, err);
	json_object_put(o);
}

static int post(const char *body, struct post_args *a, char *err, size_t errlen)
{
	struct json_object *o = reqparse__json(body, strlen(body), err, errlen);
	int r;

	cr_assert_not_null(o, "%s: %s", body, err);
	*a = (struct post_args){.frequency = 100, .seconds = 5};
	r = reqparse__post_args(o, 60, a, err, errlen);
	json_object_put(o);
	return r;
}

Test(reqparse, compute_api_body)
{
	struct post_args a;
	char err[256];

	cr_assert_eq(post("{\"profiler\": {\"BccProfile\": null}, \"sampling_frequency\": 99, "
			  "\"timeout_seconds\": 7, \"archive\": true, \"extra\": 1}", &a, err,
			  sizeof(err)), 0, "%s", err);
	cr_assert_eq(a.frequency, 99);
	cr_assert_eq(a.seconds, 7);
	cr_assert(a.archive);
	cr_assert_eq(a.kind, SESSION_CPU);
	cr_assert(targets__whole_system(&a.targets));
	cr_assert_eq(post("{\"profiler\": {\"Perf\": \"/x\"}, \"targets\": {\"pids\": [1], "
			  "\"exes\": [\"postgres\"]}}", &a, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(a.targets.npids, 1);
	cr_assert_str_eq(a.targets.exes[0], "postgres");
	targets__free(&a.targets);
	cr_assert_eq(post("{\"profiler\": {\"Perf\": null}, \"labels\": \"default,pid\"}", &a, err,
			  sizeof(err)), 0, "%s", err);
	cr_assert_eq(a.labels, LABELS_DEFAULT | LABEL_PID);
	/* profd's own variants: the kind of profile. */
	static const struct {
		const char *body;
		enum session_kind kind;
	} variants[] = {
		{"{\"profiler\": {\"OffCpu\": null}}", SESSION_OFFCPU},
		{"{\"profiler\": {\"Wall\": null}, \"sampling_frequency\": 49}", SESSION_WALL},
		{"{\"profiler\": {\"BccProfile\": \"/x\"}}", SESSION_CPU},
	};
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		cr_assert_eq(post(variants[i].body, &a, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(a.kind, variants[i].kind, "%s", variants[i].body);
	}

	static const char *const bad[][2] = {
		{"{}", "profiler"},
		{"{\"profiler\": {\"Gdb\": null}}", "unknown variant"},
		{"{\"profiler\": {\"offcpu\": null}}", "expected BccProfile, Perf, OffCpu or Wall"},
		{"{\"profiler\": {\"OffCpu\": 1}}", "null or a path"},
		{"{\"profiler\": {\"Perf\": 3}}", "null or a path"},
		{"{\"profiler\": {\"Perf\": null}, \"sampling_frequency\": 0}", "sampling_frequency"},
		{"{\"profiler\": {\"Perf\": null}, \"sampling_frequency\": 1.5}", "sampling_frequency"},
		{"{\"profiler\": {\"Perf\": null}, \"timeout_seconds\": 61}", "timeout_seconds"},
		{"{\"profiler\": {\"Perf\": null}, \"timeout_seconds\": 99999999999999999999}",
		 "timeout_seconds"},
		{"{\"profiler\": {\"Perf\": null}, \"timeout_seconds\": \"5\"}", "timeout_seconds"},
		{"{\"profiler\": {\"Perf\": null}, \"timeout_seconds\": \" 5\"}", "timeout_seconds"},
		{"{\"profiler\": {\"Perf\": null}, \"timeout_seconds\": 5.0}", "timeout_seconds"},
		{"{\"profiler\": {\"Perf\": null}, \"timeout_seconds\": 5e0}", "timeout_seconds"},
		{"{\"profiler\": {\"Perf\": null}, \"timeout_seconds\": true}", "timeout_seconds"},
		{"{\"profiler\": {\"Perf\": null}, \"archive\": 1}", "archive"},
		{"{\"profiler\": {\"Perf\": null}, \"targets\": {}}", "at least one"},
		{"{\"profiler\": {\"Perf\": null}, \"targets\": {\"pids\": [0]}}", "targets.pids[0]"},
		{"{\"profiler\": {\"Perf\": null}, \"targets\": {\"exes\": [\"\"]}}", "targets.exes[0]"},
		{"{\"profiler\": {\"Perf\": null}, \"labels\": [\"pid\"]}",
		 "labels must be a string"},
		{"{\"profiler\": {\"Perf\": null}, \"labels\": \"pid,nope\"}",
		 "unknown label \"nope\""},
		{"[]", "object"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_neq(post(bad[i][0], &a, err, sizeof(err)), 0, "%s was accepted", bad[i][0]);
		cr_assert(strstr(err, bad[i][1]), "%s: '%s' should name %s", bad[i][0], err,
			  bad[i][1]);
		targets__free(&a.targets);
	}
}

static int query_int(const char *query, long *v)
{
	struct evkeyvalq q;
	char err[128];
	int r = reqparse__query(query, 64, &q);

	if (!r)
		r = reqparse__query_int(&q, "seconds", 1, 3600, v, err, sizeof(err));
	evhttp_clear_headers(&q);
	return r;
}

Test(reqparse, query_integers_are_strict)
{
	static const char *const bad[] = {
		"seconds=%205", "seconds=+5", "seconds=1%00", "seconds=5x", "seconds=",
		"seconds=0", "seconds=3601", "seconds=5&seconds=6", "seconds=0x10", "seconds=-1",
		"seconds=%2B5", "seconds=%095", "seconds=5%20", "seconds=5.0", "seconds=5e0",
		"seconds=%005", "seconds=99999999999999999999", "seconds=%EF%BC%95",
	};
	long v = 0;

	cr_assert_eq(query_int("seconds=5", &v), 0);
	cr_assert_eq(v, 5);
	cr_assert_eq(query_int("seconds=7&seconds=7&x=1", &v), 0, "repeats that agree are fine");
	cr_assert_eq(v, 7);
	v = 30;
	cr_assert_eq(query_int("other=1", &v), 0);
	cr_assert_eq(v, 30, "absent: the default stays");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_neq(query_int(bad[i], &v), 0, "%s was accepted", bad[i]);
}

Test(reqparse, query_parameter_cap)
{
	char query[2048] = "a=1";
	struct evkeyvalq q;

	for (int i = 0; i < 70; i++)
		strcat(query, "&b=2");
	cr_assert_eq(reqparse__query(query, 64, &q), -E2BIG);
	evhttp_clear_headers(&q);
}
