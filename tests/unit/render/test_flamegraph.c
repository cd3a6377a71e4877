// SPDX-License-Identifier: BSD-2-Clause
/*
 * The flamegraph renderer and the pprof walk under it: titles, widths,
 * kinds, hostile names (escaped, and never able to end the script),
 * merging of narrow frames, units.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof/pprof.h"
#include "render/flamegraph.h"

static const struct pprof_value_type fgt_cpu[] = {
	{"samples", "count"},
	{"cpu", "nanoseconds"},
};

/* A profile of one process "app" with user mapping 1 and kernel mapping 2. */
struct fgt {
	struct pprof *p;
	uint64_t user_map, kernel_map;
};

static void fgt_init(struct fgt *t, const struct pprof_value_type *types, size_t ntypes)
{
	const struct pprof_mapping um = {.start = 0x400000, .limit = 0x500000, .file = "/bin/app"};
	const struct pprof_mapping km = {.start = 0xffffffff81000000ULL,
					 .limit = 0xffffffff82000000ULL,
					 .file = "[kernel.kallsyms]"};

	t->p = pprof__new(types, ntypes, types[ntypes - 1], 1);
	cr_assert_not_null(t->p);
	t->user_map = pprof__mapping(t->p, &um);
	t->kernel_map = pprof__mapping(t->p, &km);
	cr_assert(t->user_map && t->kernel_map);
}

/* A location in mapping of the given functions, innermost first. */
static uint64_t fgt_loc(struct fgt *t, uint64_t mapping, uint64_t addr, const char *const *fns,
			size_t n)
{
	struct pprof_line lines[8];

	cr_assert(n <= 8);
	for (size_t i = 0; i < n; i++) {
		lines[i].function_id = pprof__function(t->p, fns[i], NULL, NULL, 0);
		lines[i].line = 1;
		cr_assert(lines[i].function_id);
	}
	return pprof__location(t->p, mapping, addr, lines, n);
}

/* A stack of one function per location, given root first (main, f, g).
 * Address 0 makes locations deduplicate by function rather than address. */
static void fgt_sample(struct fgt *t, const char *const *root_first, size_t n, int64_t count)
{
	const struct pprof_label label = {"process_name", "app", 0, NULL};
	uint64_t locs[16];
	int64_t values[2] = {count, count * 10};

	cr_assert(n <= 16);
	for (size_t i = 0; i < n; i++)
		locs[n - 1 - i] = fgt_loc(t, t->user_map, 0, &root_first[i], 1);
	cr_assert_eq(pprof__add_sample(t->p, locs, n, values, &label, 1), 0);
}

static char *fgt_svg(struct fgt *t, size_t value_index, const struct flamegraph_opts *o)
{
	char *svg = NULL;
	size_t len = 0;

	cr_assert_eq(flamegraph__svg(t->p, value_index, o, &svg, &len), 0);
	cr_assert_not_null(svg);
	cr_assert_eq(strlen(svg), len);
	return svg;
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
		n++;
	return n;
}

/* The <title> text of the frame whose title starts with prefix, unescaped. */
static char *title_of(const char *svg, const char *escaped_prefix)
{
	char want[512];
	const char *s, *e;
	char *out, *o;

	snprintf(want, sizeof(want), "<title>%s", escaped_prefix);
	s = strstr(svg, want);
	cr_assert_not_null(s, "no title starting with %s", escaped_prefix);
	s += strlen("<title>");
	e = strstr(s, "</title>");
	cr_assert_not_null(e);
	out = o = calloc(1, (size_t)(e - s) + 1);
	cr_assert_not_null(out);
	while (s < e) {
		static const char *const ent[][2] = {{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"},
						     {"&quot;", "\""}, {"&#39;", "'"}};
		size_t k;

		for (k = 0; k < 5 && strncmp(s, ent[k][0], strlen(ent[k][0])); k++)
			;
		if (k < 5) {
			*o++ = ent[k][1][0];
			s += strlen(ent[k][0]);
		} else {
			cr_assert_neq(*s, '&', "a bare & in a title");
			cr_assert_neq(*s, '<', "a bare < in a title");
			*o++ = *s++;
		}
	}
	return out;
}

/* Attribute attr="..." of the first <rect> after the title starting with prefix. */
static double rect_attr(const char *svg, const char *title_prefix, const char *attr)
{
	char want[256];
	const char *s;

	snprintf(want, sizeof(want), "<title>%s", title_prefix);
	s = strstr(svg, want);
	cr_assert_not_null(s, "no frame %s", title_prefix);
	s = strstr(s, "<rect ");
	snprintf(want, sizeof(want), " %s=\"", attr);
	s = strstr(s, want);
	cr_assert_not_null(s);
	return strtod(s + strlen(want), NULL);
}

Test(flamegraph, widths_follow_samples_and_titles_state_them)
{
	const char *const a[] = {"main", "hot_a"}, *const b[] = {"main", "hot_b"};
	struct fgt t;
	char *svg;

	fgt_init(&t, fgt_cpu, 2);
	fgt_sample(&t, a, 2, 200);
	fgt_sample(&t, b, 2, 100);
	svg = fgt_svg(&t, 0, NULL);
	cr_expect_not_null(strstr(svg, "<title>all (300 samples, 100.00%)</title>"));
	cr_expect_not_null(strstr(svg, "<title>app (300 samples, 100.00%)</title>"));
	cr_expect_not_null(strstr(svg, "<title>hot_a (200 samples, 66.67%)</title>"));
	cr_expect_not_null(strstr(svg, "<title>hot_b (100 samples, 33.33%)</title>"));
	/* 1200 px wide, 10 px each side. */
	cr_expect_float_eq(rect_attr(svg, "all ", "width"), 1180, 0.01);
	cr_expect_float_eq(rect_attr(svg, "hot_a ", "width") / rect_attr(svg, "hot_b ", "width"), 2.0,
			   0.01);
	/* hot_b follows hot_a (name order) on the row above main. */
	cr_expect_float_eq(rect_attr(svg, "hot_b ", "x"), 10 + 1180 * 2.0 / 3, 0.06);
	cr_expect_eq(rect_attr(svg, "hot_a ", "y"), rect_attr(svg, "main ", "y") - 16);
	/* The subtitle states the total; one script, at the end. */
	cr_expect_not_null(strstr(svg, "total 300 samples</text>"));
	cr_expect_eq(count_of(svg, "<script"), 1);
	cr_expect_not_null(strstr(svg, "</script>\n</svg>\n"));
	/* Value 1 (cpu nanoseconds) is the same shape, ten times the numbers. */
	free(svg);
	svg = fgt_svg(&t, 1, &(struct flamegraph_opts){.unit = "ns"});
	cr_expect_not_null(strstr(svg, "<title>hot_a (2,000 ns, 66.67%)</title>"));
	free(svg);
	pprof__free(t.p);
}

/* Nanoseconds (off-CPU, wall and cpu time) read as time, never as "samples". */
Test(flamegraph, nanoseconds_read_as_time)
{
	static const struct {
		int64_t ns;
		const char *want;
	} cases[] = {
		{70, "70 ns"},
		{2500, "2.50 \xc2\xb5s"},
		{45600000, "45.6 ms"},
		{123456789, "123 ms"},
		{2050000000, "2.05 s"},
		{312000000000, "312 s"},
	};
	const char *const a[] = {"main", "wait_a"};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fgt t;
		char want[128], *svg;

		fgt_init(&t, fgt_cpu, 2);
		/* fgt_sample's value 1 is ten times its count */
		fgt_sample(&t, a, 2, cases[i].ns / 10);
		svg = fgt_svg(&t, 1, NULL);
		snprintf(want, sizeof(want), "<title>wait_a (%s, 100.00%%)</title>", cases[i].want);
		cr_expect_not_null(strstr(svg, want), "%s", want);
		snprintf(want, sizeof(want), "total %s</text>", cases[i].want);
		cr_expect_not_null(strstr(svg, want), "%s", want);
		cr_expect_null(strstr(svg, "samples"), "%" PRId64 " ns", cases[i].ns);
		free(svg);
		pprof__free(t.p);
	}
}

/* Names as hostile as a profile can hold, and how their title must start. */
static const struct {
	const char *name;
	const char *escaped;
} hostile[] = {
	{"a<b&c\"d'e>", "a&lt;b&amp;c&quot;d&#39;e&gt;"},
	{"</script><script>alert(1)</script>", "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"},
	{"]]></script><svg onload=alert(1)>", "]]&gt;&lt;/script&gt;&lt;svg onload=alert(1)&gt;"},
	{"std::map<std::basic_string<char, std::char_traits<char>, std::allocator<char> >, "
	 "std::vector<int, std::allocator<int> > >::operator[](std::string const&)",
	 "std::map&lt;std::basic_string&lt;char, std::char_traits&lt;char&gt;"},
	{"&amp; already", "&amp;amp; already"},
};

/* Criterion copies parameters into its worker processes, where pointers in
 * them would dangle: the parameter is an index into hostile[]. */
ParameterizedTestParameters(flamegraph, hostile_names_round_trip_escaped)
{
	static int idx[sizeof(hostile) / sizeof(hostile[0])];

	for (size_t i = 0; i < sizeof(idx) / sizeof(idx[0]); i++)
		idx[i] = (int)i;
	return cr_make_param_array(int, idx, sizeof(idx) / sizeof(idx[0]));
}

ParameterizedTest(int *i, flamegraph, hostile_names_round_trip_escaped)
{
	const char *name = hostile[*i].name;
	const char *stack[] = {"main", name};
	char want[512], *svg, *title;
	struct fgt t;

	fgt_init(&t, fgt_cpu, 2);
	fgt_sample(&t, stack, 2, 7);
	svg = fgt_svg(&t, 0, &(struct flamegraph_opts){.title = name, .subtitle = name});
	title = title_of(svg, hostile[*i].escaped);
	snprintf(want, sizeof(want), "%s (7 samples, 100.00%%)", name);
	cr_expect_str_eq(title, want);
	/* Nowhere raw, not even in the document's title and subtitle. */
	if (strpbrk(name, "<>&\"'"))
		cr_expect_null(strstr(svg, name), "'%s' appears unescaped", name);
	/* Only the script's own tags and CDATA end: a name can't end it or open another. */
	cr_expect_eq(count_of(svg, "<script"), 1);
	cr_expect_eq(count_of(svg, "</script"), 1);
	cr_expect_eq(count_of(svg, "]]>"), 1);
	free(title);
	free(svg);
	pprof__free(t.p);
}

/* Bytes XML can't hold (invalid UTF-8, control characters) reach the SVG
 * as the profile's string table escaped them (pprof/utf8.h): the same
 * text as in pprof and folded. */
Test(flamegraph, bytes_xml_refuses_are_replaced)
{
	const char *stack[] = {"main", "bad\xff\xfe\x01name\xc3\xa9\xed\xa0\x80"};
	struct fgt t;
	char *svg;

	fgt_init(&t, fgt_cpu, 2);
	fgt_sample(&t, stack, 2, 1);
	svg = fgt_svg(&t, 0, NULL);
	cr_expect_not_null(strstr(svg, "<title>bad\\xff\\xfe\\x01name\xc3\xa9"
				       "\\xed\\xa0\\x80 (1 samples"));
	for (const unsigned char *s = (const unsigned char *)svg; *s; s++)
		cr_assert(*s >= 0x20 || *s == '\n' || *s == '\t', "control byte %#x", *s);
	free(svg);
	pprof__free(t.p);
}

/* Kernel locations, inlined lines, and the process root each get their kind. */
Test(flamegraph, kinds)
{
	const char *const inl[] = {"mix", "hot_a"}, *const m[] = {"main"},
			  *const k[] = {"ksys_read"};
	const struct pprof_label label = {"process_name", "app", 0, NULL};
	int64_t values[2] = {5, 50};
	uint64_t locs[3];
	struct fgt t;
	char *svg;

	fgt_init(&t, fgt_cpu, 2);
	locs[0] = fgt_loc(&t, t.kernel_map, 0xffffffff81001000ULL, k, 1);
	locs[1] = fgt_loc(&t, t.user_map, 0x401100, inl, 2);
	locs[2] = fgt_loc(&t, t.user_map, 0x401200, m, 1);
	cr_assert_eq(pprof__add_sample(t.p, locs, 3, values, &label, 1), 0);
	svg = fgt_svg(&t, 0, NULL);
	cr_expect_not_null(strstr(svg, "<g class=\"a\"><title>all ("));
	cr_expect_not_null(strstr(svg, "<g class=\"r\"><title>app ("));
	cr_expect_not_null(strstr(svg, "<g class=\"u\"><title>main ("));
	cr_expect_not_null(strstr(svg, "<g class=\"u\"><title>hot_a ("));
	cr_expect_not_null(strstr(svg, "<g class=\"i\"><title>mix ("));
	cr_expect_not_null(strstr(svg, "<g class=\"k\"><title>ksys_read ("));
	free(svg);
	pprof__free(t.p);
}

struct walk_seen {
	char text[256];
	int64_t value;
};

static int walk_cb(const struct pprof_frame *frames, size_t n, int64_t value, void *ctx)
{
	static const char kinds[] = {[PPROF_FRAME_ROOT] = 'R', [PPROF_FRAME_USER] = 'U',
				     [PPROF_FRAME_KERNEL] = 'K', [PPROF_FRAME_INLINED] = 'I'};
	struct walk_seen *w = ctx;
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		len += snprintf(w->text + len, sizeof(w->text) - len, "%s%s:%c", i ? ";" : "",
				frames[i].name, kinds[frames[i].kind]);
	w->value = value;
	return 0;
}

/* pprof__for_each_stack: root first, inlined callers before their callee's
 * physical frame, unnamed frames by address. */
Test(pprof_walk, frames_root_first_with_kinds)
{
	const char *const inl[] = {"mix", "hot_a"}, *const k[] = {"ksys_read"};
	const struct pprof_label label = {"process_name", "app", 0, NULL};
	int64_t values[2] = {3, 30};
	struct walk_seen w = {0};
	uint64_t locs[3];
	struct fgt t;

	fgt_init(&t, fgt_cpu, 2);
	locs[0] = fgt_loc(&t, t.kernel_map, 0xffffffff81001000ULL, k, 1);
	locs[1] = fgt_loc(&t, t.user_map, 0x401100, inl, 2);
	locs[2] = pprof__location(t.p, t.user_map, 0x401abc, NULL, 0);
	cr_assert_eq(pprof__add_sample(t.p, locs, 3, values, &label, 1), 0);
	cr_assert_eq(pprof__for_each_stack(t.p, 1, "process_name", walk_cb, &w), 0);
	cr_expect_str_eq(w.text, "app:R;0x401abc:U;hot_a:U;mix:I;ksys_read:K");
	cr_expect_eq(w.value, 30);
	cr_assert_eq(pprof__for_each_stack(t.p, 0, NULL, walk_cb, &w), 0);
	cr_expect_str_eq(w.text, "0x401abc:U;hot_a:U;mix:I;ksys_read:K");
	cr_expect_eq(pprof__for_each_stack(t.p, 2, NULL, walk_cb, &w), -EINVAL);
	pprof__free(t.p);
}

/* A long tail of tiny functions becomes one merged frame, so the SVG stays small. */
Test(flamegraph, narrow_frames_merge)
{
	const char *stack[] = {"main", NULL};
	char name[32], *svg;
	struct fgt t;

	fgt_init(&t, fgt_cpu, 2);
	stack[1] = "big";
	fgt_sample(&t, stack, 2, 100000);
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "tiny%04d", i);
		stack[1] = name;
		fgt_sample(&t, stack, 2, 1);
	}
	svg = fgt_svg(&t, 0, NULL);
	/* all, app, main, big, and the tail in one, 1000 * 1180 / 101000 px wide;
	 * and the legend's and the frames' groups. */
	cr_expect_eq(count_of(svg, "<g class="), 5 + 2);
	cr_expect_not_null(strstr(svg, "<g class=\"m\"><title>[1000 small frames] (1,000 samples, 0.99%)"));
	cr_expect_null(strstr(svg, "tiny0001"));
	cr_expect_float_eq(rect_attr(svg, "[1000 small", "width"), 1180 * 1000.0 / 101000, 0.06);
	free(svg);
	/* A wider min_width drops the merged tail too (11.7 px < 20 px). */
	svg = fgt_svg(&t, 0, &(struct flamegraph_opts){.min_width = 20});
	cr_expect_null(strstr(svg, "small frames] ("));
	free(svg);
	pprof__free(t.p);
}

/*
 * Distinct paths past the node budget (100,000): each stack that would add
 * a node ends in its last shared frame's "[deeper frames]", whatever its
 * depth; the subtitle says how many samples that cut, and the total stays.
 */
Test(flamegraph, node_budget_cuts_deeper_frames, .timeout = 60)
{
	const char *stack[16];
	char names[16][24], *svg;
	struct fgt t;
	int64_t total = 0;

	fgt_init(&t, fgt_cpu, 2);
	/* 8,000 stacks 16 deep that share only main: 120,000 paths. */
	for (int s = 0; s < 8000; s++) {
		stack[0] = "main";
		for (int d = 1; d < 16; d++) {
			snprintf(names[d], sizeof(names[d]), "f%d_%d", s, d);
			stack[d] = names[d];
		}
		fgt_sample(&t, stack, 16, 1);
		total++;
	}
	svg = fgt_svg(&t, 0, &(struct flamegraph_opts){.min_width = 0.0001});
	cr_assert_not_null(svg);
	cr_expect_not_null(strstr(svg, "end in [deeper frames] (over 100000 distinct paths)"), "%.300s",
			   strstr(svg, "class=\"sub\"") ?: "");
	cr_expect_not_null(strstr(svg, "[deeper frames] ("));
	/* All of it is still there: "all" holds every sample. */
	cr_expect_not_null(strstr(svg, "<title>all (8,000 samples, 100.00%)"));
	cr_expect_eq(total, 8000);
	/* Stacks past the budget lost their deeper frames: the last ones
	 * are not drawn 16 deep, the first ones are. */
	cr_expect_null(strstr(svg, "f7999_15"));
	cr_expect_not_null(strstr(svg, "f0_15"));
	free(svg);
	pprof__free(t.p);
}

/* Heap profiles count bytes, and say so. */
Test(flamegraph, bytes_unit_from_the_sample_type)
{
	static const struct pprof_value_type heap[] = {{"inuse_space", "bytes"}};
	const char *const stack[] = {"main", "palloc"};
	const struct pprof_label label = {"process_name", "postgres", 0, NULL};
	int64_t v = 4194304;
	uint64_t loc;
	struct fgt t;
	char *svg;

	fgt_init(&t, heap, 1);
	loc = fgt_loc(&t, t.user_map, 0x401000, &stack[1], 1);
	cr_assert_eq(pprof__add_sample(t.p, &loc, 1, &v, &label, 1), 0);
	svg = fgt_svg(&t, 0, &(struct flamegraph_opts){.title = "Heap"});
	cr_expect_not_null(strstr(svg, "<title>palloc (4,194,304 bytes, 100.00%)</title>"));
	cr_expect_not_null(strstr(svg, "total 4,194,304 bytes</text>"));
	free(svg);
	pprof__free(t.p);
}

Test(flamegraph, empty_profile_and_bad_arguments)
{
	struct fgt t;
	char *svg = NULL;
	size_t len;

	fgt_init(&t, fgt_cpu, 2);
	svg = fgt_svg(&t, 0, NULL);
	cr_expect_not_null(strstr(svg, "<title>all (0 samples, 100.00%)</title>"));
	free(svg);
	svg = NULL;
	cr_expect_eq(flamegraph__svg(t.p, 2, NULL, &svg, &len), -EINVAL);
	cr_expect_eq(flamegraph__svg(t.p, 0, &(struct flamegraph_opts){.width = 5}, &svg, &len),
		     -EINVAL);
	cr_expect_eq(flamegraph__svg(NULL, 0, NULL, &svg, &len), -EINVAL);
	cr_expect_null(svg);
	pprof__free(t.p);
}
