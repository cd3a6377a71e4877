// SPDX-License-Identifier: BSD-2-Clause
/*
 * The string table's escaping (pprof/utf8.h) and coarsening to a
 * receiver's limits (pprof__coarsen): what a profile says after each, read
 * back through the same API the renderers use.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof/pprof.h"
#include "pprof/utf8.h"

/* ---- escaping ------------------------------------------------------------ */

struct esc_case {
	char in[40], want[48];
};

ParameterizedTestParameters(utf8, escape)
{
	static struct esc_case cases[] = {
		{"postgres", "postgres"},
		{"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
		{"bad\xe9" "bin", "bad\\xe9bin"},			/* Latin-1, not UTF-8 */
		{"a\nb\tc\x1b[31m", "a\\x0ab\\x09c\\x1b[31m"},		/* C0 controls */
		{"del\x7f", "del\\x7f"},
		{"c1\xc2\x85", "c1\\xc2\\x85"},				/* NEL, a C1 control */
		{"nbsp\xc2\xa0", "nbsp\xc2\xa0"},			/* U+00A0 is printable */
		{"over\xc0\xaf", "over\\xc0\\xaf"},			/* overlong '/' */
		{"sur\xed\xa0\x80", "sur\\xed\\xa0\\x80"},		/* a surrogate */
		{"big\xf4\x90\x80\x80", "big\\xf4\\x90\\x80\\x80"},	/* past U+10FFFF */
		{"cut\xe2\x82", "cut\\xe2\\x82"},			/* truncated sequence */
		{"\xff\xfe", "\\xff\\xfe"},
		{"back\\xe9slash", "back\\xe9slash"},			/* kept as it is */
		{"", ""},
	};

	return cr_make_param_array(struct esc_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct esc_case *c, utf8, escape)
{
	size_t n = utf8__escaped_len(c->in, strlen(c->in));
	char *out = malloc(n + 1);

	cr_assert_not_null(out);
	cr_assert_eq(n, strlen(c->want), "length of %s", c->want);
	utf8__escape(c->in, strlen(c->in), out);
	cr_assert_str_eq(out, c->want);
	free(out);
}

static const struct pprof_value_type types[] = {{"samples", "count"}, {"cpu", "nanoseconds"}};

/* Every string the table holds, read back through the read API, is escaped. */
Test(utf8, every_field_of_a_profile)
{
	struct pprof *p = pprof__new(types, 2, types[1], 1000);
	const struct pprof_mapping m = {.start = 0x1000, .limit = 0x2000,
					.file = "/tmp/bad\xe9" "bin", .build_id = "\xff"};
	const struct pprof_label l = {"thread_name", "t\x1b[0m\xe9", 0, NULL};
	struct pprof_line line;
	uint64_t loc, mid;
	const int64_t v[2] = {1, 1000};
	char *folded = NULL;
	size_t len;

	cr_assert_not_null(p);
	mid = pprof__mapping(p, &m);
	line.function_id = pprof__function(p, "fn\xe9", "fn\xe9", "src\n.c", 0);
	line.line = 1;
	loc = pprof__location(p, mid, 0x1100, &line, 1);
	cr_assert(loc);
	cr_assert_eq(pprof__add_sample(p, &loc, 1, v, &l, 1), 0);
	cr_assert_eq(pprof__add_comment(p, "comment \xe9"), 0);
	cr_assert_str_eq(pprof__comment(p, 0), "comment \\xe9");
	/* Raw and escaped forms are one string: interned once. */
	cr_assert_eq(pprof__string(p, "/tmp/bad\xe9" "bin"), pprof__string(p, "/tmp/bad\\xe9bin"));
	cr_assert_eq(pprof__folded(p, 0, "thread_name", &folded, &len), 0);
	cr_assert_str_eq(folded, "t\\x1b[0m\\xe9;fn\\xe9 1\n");
	free(folded);
	/* A label key that needs escaping is found by its raw bytes too. */
	cr_assert_eq(pprof__add_sample(p, &loc, 1, v, &(struct pprof_label){"k\xe9y", "v", 0, NULL},
				       1), 0);
	cr_assert_eq(pprof__folded(p, 0, "k\xe9y", &folded, &len), 0);
	cr_assert_not_null(strstr(folded, "v;fn\\xe9 1\n"), "%s", folded);
	free(folded);
	pprof__free(p);
}

/* ---- coarsening ---------------------------------------------------------- */

/*
 * A profile of n samples, root -> mid(i % 4) -> leaf(i % distinct), weight
 * i + 1, pid label i % pids (none when pids is 0): the shape of a busy
 * whole-system scrape with pid labels.
 */
static struct pprof *many_of(size_t n, size_t distinct, size_t pids)
{
	struct pprof *p = pprof__new(types, 2, types[1], 1000);
	uint64_t mid = 0, root_fn, root_loc;
	char name[32], pidv[16];
	struct pprof_line ln = {0, 0};

	cr_assert_not_null(p);
	mid = pprof__mapping(p, &(struct pprof_mapping){.start = 1, .limit = 1 << 30,
							 .file = "/bin/app"});
	root_fn = pprof__function(p, "main", NULL, NULL, 0);
	ln.function_id = root_fn;
	root_loc = pprof__location(p, mid, 0x10, &ln, 1);
	for (size_t i = 0; i < n; i++) {
		uint64_t locs[3];
		int64_t v[2] = {(int64_t)i + 1, ((int64_t)i + 1) * 1000};
		struct pprof_label labels[2] = {{"process_name", "app", 0, NULL},
						{"pid", pidv, 0, NULL}};

		snprintf(name, sizeof(name), "leaf_%zu", i % distinct);
		ln.function_id = pprof__function(p, name, NULL, NULL, 0);
		locs[0] = pprof__location(p, mid, 0x100000 + i % distinct, &ln, 1);
		snprintf(name, sizeof(name), "mid_%zu", i % 4);
		ln.function_id = pprof__function(p, name, NULL, NULL, 0);
		locs[1] = pprof__location(p, mid, 0x20 + i % 4, &ln, 1);
		locs[2] = root_loc;
		snprintf(pidv, sizeof(pidv), "%zu", 100 + (pids ? i % pids : 0));
		cr_assert_eq(pprof__add_sample(p, locs, 3, v, labels, pids ? 2 : 1), 0);
	}
	return p;
}

static struct pprof *many(size_t nstacks, bool pid)
{
	return many_of(nstacks, nstacks, pid ? 50 : 0);
}

static int64_t total(struct pprof *p, size_t idx)
{
	char *folded, *line, *save = NULL;
	int64_t sum = 0;
	size_t len;

	cr_assert_eq(pprof__folded(p, idx, NULL, &folded, &len), 0);
	for (line = strtok_r(folded, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		sum += strtoll(strrchr(line, ' ') + 1, NULL, 10);
	free(folded);
	return sum;
}

static const char *const keep[] = {"process_name", NULL};

Test(coarsen, within_limits_untouched)
{
	struct pprof *p = many(100, true), *orig = p;
	struct pprof_limits lim = {PPROF_PYROSCOPE_MAX_SAMPLES, PPROF_PYROSCOPE_MAX_BYTES};
	struct pprof_coarsen_result r;

	cr_assert_eq(pprof__coarsen(&p, &lim, keep, &r), 0);
	cr_assert_eq(p, orig);
	cr_assert_not(r.coarsened);
	cr_assert_eq(pprof__sample_count(p), 100);
	cr_assert_null(pprof__comment(p, 0));
	pprof__free(p);
}

/* 100 stacks by 7 pids make 700 samples; dropping pid leaves 100, which fit
 * 300 whole: no stack is folded. */
Test(coarsen, labels_first)
{
	struct pprof *p = many_of(2000, 100, 7);
	struct pprof_limits lim = {300, 0};
	struct pprof_coarsen_result r;
	int64_t before = total(p, 1);

	cr_assert_eq(pprof__sample_count(p), 700);
	cr_assert_eq(pprof__coarsen(&p, &lim, keep, &r), 0);
	cr_assert(r.coarsened);
	cr_assert(r.labels_merged);
	cr_assert_eq(r.fold_below, 0, "stacks were folded though labels sufficed");
	cr_assert_eq(pprof__sample_count(p), 100);
	cr_assert_eq(total(p, 1), before);
	cr_assert_null(strstr(pprof__comment(p, 0), "folded"), "%s", pprof__comment(p, 0));
	pprof__free(p);
}

Test(coarsen, folds_light_stacks_into_callers)
{
	struct pprof *p = many(2000, true);
	struct pprof_limits lim = {500, 0};
	struct pprof_coarsen_result r;
	int64_t before0 = total(p, 0), before1 = total(p, 1);
	char *folded;
	size_t len;

	cr_assert_eq(pprof__coarsen(&p, &lim, keep, &r), 0);
	cr_assert(r.coarsened);
	cr_assert_gt(r.fold_below, 0);
	cr_assert_leq(pprof__sample_count(p), 500);
	/* Not more than needed: close to the limit, not a handful of roots. */
	cr_assert_geq(pprof__sample_count(p), 400, "%zu samples", pprof__sample_count(p));
	cr_assert_eq(r.samples_after, pprof__sample_count(p));
	cr_assert_eq(total(p, 0), before0, "sample counts are kept exactly");
	cr_assert_eq(total(p, 1), before1);
	/* The heaviest stack survives whole; light ones end at mid_N. */
	cr_assert_eq(pprof__folded(p, 0, NULL, &folded, &len), 0);
	cr_assert_not_null(strstr(folded, "main;mid_3;leaf_1999 2000\n"), "%.300s", folded);
	cr_assert_not_null(strstr(folded, "main;mid_0 "), "light leaves folded into mid_0");
	cr_assert_null(strstr(folded, "leaf_0 "), "leaf_0 (weight 1) is still there");
	free(folded);
	cr_assert_not_null(pprof__comment(p, 0));
	cr_assert_not_null(strstr(pprof__comment(p, 0), "coarsened to fit max_samples=500"),
			   "%s", pprof__comment(p, 0));
	cr_assert_not_null(strstr(pprof__comment(p, 0), "folded into its caller"));
	pprof__free(p);
}

Test(coarsen, size_limit)
{
	struct pprof *p = many(3000, false);
	struct pprof_limits lim = {0, 30000};
	struct pprof_coarsen_result r;
	int64_t before = total(p, 0);
	size_t bytes;

	cr_assert_eq(pprof__encoded_size(p, &bytes), 0);
	cr_assert_gt(bytes, 60000, "the test profile is %zu bytes", bytes);
	cr_assert_eq(pprof__coarsen(&p, &lim, keep, &r), 0);
	cr_assert(r.coarsened);
	cr_assert_eq(pprof__encoded_size(p, &bytes), 0);
	cr_assert_leq(bytes, 30000);
	cr_assert_eq(bytes, r.bytes_after);
	cr_assert_gt(bytes, 10000, "far smaller than needed: %zu bytes", bytes);
	cr_assert_eq(total(p, 0), before);
	pprof__free(p);
}

/* Nothing left to fold: roots only, one sample per label set, still exact. */
Test(coarsen, down_to_roots)
{
	struct pprof *p = many(200, true);
	struct pprof_limits lim = {1, 0};
	struct pprof_coarsen_result r;
	int64_t before = total(p, 0);

	cr_assert_eq(pprof__coarsen(&p, &lim, keep, &r), 0);
	cr_assert_eq(pprof__sample_count(p), 1);
	cr_assert_eq(total(p, 0), before);
	pprof__free(p);
}

/* More label sets than samples allowed: the labels go too. */
Test(coarsen, more_label_sets_than_allowed)
{
	struct pprof *p = many(200, true);
	struct pprof_limits lim = {10, 0};
	struct pprof_coarsen_result r;
	const char *const keep_pid[] = {"pid", NULL};
	int64_t before = total(p, 0);

	cr_assert_eq(pprof__coarsen(&p, &lim, keep_pid, &r), 0);
	cr_assert(r.labels_dropped);
	cr_assert_leq(pprof__sample_count(p), 10);
	cr_assert_eq(total(p, 0), before);
	cr_assert_not_null(strstr(pprof__comment(p, 0), "across all labels"), "%s",
			   pprof__comment(p, 0));
	pprof__free(p);
}

/*
 * The case at Pyroscope's own limits: a 59 s whole-system scrape
 * at 99 Hz of about four busy CPUs, nearly every sample a stack of its own
 * (20 frames from 40 functions), with every label asked for (a tid of 400,
 * a process of 8).  It holds 24,000 samples, past 16,000: it must come
 * back under both limits, with the default label (process_name) kept and
 * every sample's weight in it.
 */
Test(coarsen, whole_system_scrape_at_pyroscope_defaults)
{
	enum { N = 24000, DEPTH = 20, FNS = 40, TIDS = 400, PROCS = 8 };
	struct pprof *p = pprof__new(types, 2, types[1], 10101010);
	struct pprof_limits lim = {PPROF_PYROSCOPE_MAX_SAMPLES, PPROF_PYROSCOPE_MAX_BYTES};
	struct pprof_coarsen_result r;
	uint64_t fns[FNS], mid, locs[DEPTH];
	unsigned s = 1;
	int64_t before0, before1;
	size_t bytes;
	char name[32], tid[16], proc[16];

	cr_assert_not_null(p);
	mid = pprof__mapping(p, &(struct pprof_mapping){.start = 0x400000, .limit = 0x800000,
							 .file = "/usr/bin/app"});
	for (size_t f = 0; f < FNS; f++) {
		snprintf(name, sizeof(name), "function_%zu", f);
		fns[f] = pprof__function(p, name, NULL, "app.c", 0);
	}
	for (size_t i = 0; i < N; i++) {
		int64_t v[2] = {1 + (int64_t)(i % 7 == 0), 10101010};
		struct pprof_label labels[2] = {{"process_name", proc, 0, NULL},
						{"tid", tid, 0, NULL}};

		for (size_t d = 0; d < DEPTH; d++) {
			/* The outermost frames shared (main's callees), the rest random. */
			size_t f = d >= DEPTH - 3 ? d % FNS : ((s = s * 1103515245 + 12345) >> 16) % FNS;
			struct pprof_line ln = {fns[f], (int64_t)d + 1};

			locs[d] = pprof__location(p, mid, 0x400000 + f * 0x100 + d, &ln, 1);
			cr_assert(locs[d]);
		}
		snprintf(tid, sizeof(tid), "%zu", 1000 + i % TIDS);
		snprintf(proc, sizeof(proc), "proc%zu", (i % TIDS) % PROCS);
		v[1] *= v[0];
		cr_assert_eq(pprof__add_sample(p, locs, DEPTH, v, labels, 2), 0);
	}
	cr_assert_gt(pprof__sample_count(p), PPROF_PYROSCOPE_MAX_SAMPLES, "%zu samples",
		     pprof__sample_count(p));
	before0 = total(p, 0);
	before1 = total(p, 1);

	cr_assert_eq(pprof__coarsen(&p, &lim, keep, &r), 0);
	cr_assert(r.coarsened);
	cr_assert_leq(pprof__sample_count(p), PPROF_PYROSCOPE_MAX_SAMPLES);
	cr_assert_eq(pprof__encoded_size(p, &bytes), 0);
	cr_assert_leq(bytes, PPROF_PYROSCOPE_MAX_BYTES);
	cr_assert_not(r.labels_dropped, "the default label went too");
	cr_assert_eq(total(p, 0), before0, "sample counts are kept exactly");
	cr_assert_eq(total(p, 1), before1);
	cr_assert_not_null(strstr(pprof__comment(p, 0), "coarsened to fit max_samples=16000 "
					   "max_bytes=4194304"), "%s", pprof__comment(p, 0));
	pprof__free(p);
}
