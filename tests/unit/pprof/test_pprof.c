// SPDX-License-Identifier: BSD-2-Clause
/*
 * The profile builder: deduplication, sample merging, the encoded bytes
 * (read back with a small decoder built on pb__get_varint) and the
 * collapsed-stack text.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "pprof/pb.h"
#include "pprof/pprof.h"

static const struct pprof_value_type ppt_types[] = {
	{"samples", "count"},
	{"cpu", "nanoseconds"},
};

static struct pprof *ppt_new(void)
{
	struct pprof *p = pprof__new(ppt_types, 2, ppt_types[1], 10000000);

	cr_assert_not_null(p);
	return p;
}

/* ---- a small profile shared by several tests ----------------------------- */

static struct pprof *ppt_p;
static uint64_t ppt_map, ppt_main, ppt_work, ppt_inl, ppt_l1, ppt_l2, ppt_l3;

static void ppt_add(const uint64_t *locs, size_t nlocs, int64_t count,
		    const struct pprof_label *labels, size_t nlabels)
{
	const int64_t values[2] = {count, count * 10};

	cr_assert_eq(pprof__add_sample(ppt_p, locs, nlocs, values, labels, nlabels), 0);
}

/*
 * main -> work -> inl;x, where inl;x is inlined into work, so one location
 * (l1) carries two lines.  l3 is an address without symbols.
 */
static void ppt_setup(void)
{
	const struct pprof_mapping m = {
		.start = 0x400000,
		.limit = 0x500000,
		.file = "/usr/bin/app",
		.build_id = "abcd",
		.has_functions = true,
		.has_inline_frames = true,
	};
	struct pprof_line l1_lines[2], l2;
	const struct pprof_label app_t7[] = {{"process_name", "app", 0, NULL},
					     {"tid", NULL, 7, NULL}};
	const struct pprof_label t7_app[] = {{"tid", NULL, 7, NULL},
					     {"process_name", "app", 0, NULL}};
	const struct pprof_label app_t8[] = {{"process_name", "app", 0, NULL},
					     {"tid", NULL, 8, NULL}};
	uint64_t s12[2], s32[2];

	ppt_p = ppt_new();
	ppt_map = pprof__mapping(ppt_p, &m);
	ppt_main = pprof__function(ppt_p, "main", NULL, "app.c", 3);
	ppt_work = pprof__function(ppt_p, "work", NULL, "app.c", 20);
	ppt_inl = pprof__function(ppt_p, "inl;x", NULL, "app.h", 10);
	cr_assert_eq(ppt_map, 1);
	cr_assert_eq(ppt_main, 1);
	cr_assert_eq(ppt_work, 2);
	cr_assert_eq(ppt_inl, 3);

	l1_lines[0] = (struct pprof_line){ppt_inl, 12};
	l1_lines[1] = (struct pprof_line){ppt_work, 30};
	l2 = (struct pprof_line){ppt_main, 5};
	ppt_l1 = pprof__location(ppt_p, ppt_map, 0x401000, l1_lines, 2);
	ppt_l2 = pprof__location(ppt_p, ppt_map, 0x402000, &l2, 1);
	ppt_l3 = pprof__location(ppt_p, ppt_map, 0x403abc, NULL, 0);
	cr_assert_eq(ppt_l1, 1);
	cr_assert_eq(ppt_l2, 2);
	cr_assert_eq(ppt_l3, 3);

	s12[0] = ppt_l1;
	s12[1] = ppt_l2;
	s32[0] = ppt_l3;
	s32[1] = ppt_l2;
	ppt_add(s12, 2, 3, app_t7, 2);
	ppt_add(s12, 2, 4, t7_app, 2); /* same labels, other order: merges */
	ppt_add(s12, 2, 1, app_t8, 2);
	ppt_add(s32, 2, 2, app_t7, 1);
	ppt_add(&s12[1], 1, 5, NULL, 0);
}

static void ppt_teardown(void)
{
	pprof__free(ppt_p);
	ppt_p = NULL;
}

/* ---- a minimal protobuf reader ------------------------------------------- */

struct ppt_field {
	uint32_t num;
	uint64_t v;	    /* varint fields */
	const uint8_t *buf; /* length-delimited fields */
	size_t len;
};

/* Next field of msg[*off..len), or false at the end; fails on bad input. */
static bool ppt_next(const uint8_t *msg, size_t len, size_t *off, struct ppt_field *f)
{
	uint64_t tag, n;
	size_t used;

	if (*off >= len)
		return false;
	used = pb__get_varint(msg + *off, len - *off, &tag);
	cr_assert_neq(used, 0, "bad tag at %zu", *off);
	*off += used;
	f->num = (uint32_t)(tag >> 3);
	used = pb__get_varint(msg + *off, len - *off, &n);
	cr_assert_neq(used, 0, "bad varint at %zu", *off);
	*off += used;
	f->v = n;
	f->buf = NULL;
	f->len = 0;
	switch (tag & 7) {
	case 0:
		break;
	case 2:
		cr_assert_leq(n, len - *off, "length past the end at %zu", *off);
		f->buf = msg + *off;
		f->len = (size_t)n;
		*off += (size_t)n;
		break;
	default:
		cr_assert_fail("unexpected wire type %u", (unsigned)(tag & 7));
	}
	return true;
}

static size_t ppt_count(const uint8_t *msg, size_t len, uint32_t num)
{
	struct ppt_field f;
	size_t off = 0, n = 0;

	while (ppt_next(msg, len, &off, &f))
		n += f.num == num;
	return n;
}

/* The idx-th occurrence of field num; fails the test if there is none. */
static struct ppt_field ppt_nth(const uint8_t *msg, size_t len, uint32_t num, size_t idx)
{
	struct ppt_field f = {0};
	size_t off = 0, seen = 0;

	while (ppt_next(msg, len, &off, &f)) {
		if (f.num == num && seen++ == idx)
			return f;
	}
	cr_assert_fail("field %u #%zu missing (%zu present)", num, idx, seen);
	return f;
}

/* A scalar field's value; 0 when absent, as proto3 defines it. */
static uint64_t ppt_scalar(const uint8_t *msg, size_t len, uint32_t num)
{
	struct ppt_field f;
	size_t off = 0;
	uint64_t v = 0;

	while (ppt_next(msg, len, &off, &f)) {
		if (f.num == num)
			v = f.v;
	}
	return v;
}

/* string_table[idx] as a C string, for comparisons. */
static char *ppt_string(const uint8_t *prof, size_t len, uint64_t idx)
{
	struct ppt_field f = ppt_nth(prof, len, 6, idx);
	char *s = malloc(f.len + 1);

	cr_assert_not_null(s);
	memcpy(s, f.buf, f.len);
	s[f.len] = '\0';
	return s;
}

static void ppt_assert_string(const uint8_t *prof, size_t len, uint64_t idx, const char *want)
{
	char *s = ppt_string(prof, len, idx);

	cr_assert_str_eq(s, want, "string_table[%llu]", (unsigned long long)idx);
	free(s);
}

/* ---- dedup ---------------------------------------------------------------- */

Test(pprof, string_dedup)
{
	struct pprof *p = ppt_new();

	/* pprof__new interned "", samples, count, cpu, nanoseconds */
	cr_assert_eq(pprof__string(p, ""), 0);
	cr_assert_eq(pprof__string(p, NULL), 0);
	cr_assert_eq(pprof__string(p, "samples"), 1);
	cr_assert_eq(pprof__string(p, "nanoseconds"), 4);
	cr_assert_eq(pprof__string(p, "foo"), 5);
	cr_assert_eq(pprof__string(p, "bar"), 6);
	cr_assert_eq(pprof__string(p, "foo"), 5);
	cr_assert_eq(pprof__string(p, "fo"), 7, "a prefix is another string");
	cr_assert_eq(pprof__string(NULL, "x"), -EINVAL);
	pprof__free(p);
}

Test(pprof, string_dedup_many)
{
	struct pprof *p = ppt_new();
	char name[32];
	int64_t i;

	/* enough to make the index grow several times */
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "fn_%lld", (long long)i);
		cr_assert_eq(pprof__string(p, name), 5 + i);
	}
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "fn_%lld", (long long)i);
		cr_assert_eq(pprof__string(p, name), 5 + i);
	}
	pprof__free(p);
}

Test(pprof, function_dedup)
{
	struct pprof *p = ppt_new();
	uint64_t f = pprof__function(p, "main", NULL, "main.c", 10);

	cr_assert_eq(f, 1);
	cr_assert_eq(pprof__function(p, "main", "", "main.c", 10), 1, "NULL and \"\" are equal");
	cr_assert_eq(pprof__function(p, "main", NULL, "main.c", 11), 2);
	cr_assert_eq(pprof__function(p, "main", "_main", "main.c", 10), 3);
	cr_assert_eq(pprof__function(p, "main", NULL, "other.c", 10), 4);
	cr_assert_eq(pprof__function(p, "main", NULL, "main.c", 10), 1);
	cr_assert_eq(pprof__function(NULL, "main", NULL, NULL, 0), 0);
	pprof__free(p);
}

Test(pprof, mapping_dedup)
{
	struct pprof *p = ppt_new();
	struct pprof_mapping m = {
		.start = 0x1000, .limit = 0x2000, .file = "/lib/libc.so.6", .build_id = "beef"};
	struct pprof_mapping other = m;

	cr_assert_eq(pprof__mapping(p, &m), 1);
	cr_assert_eq(pprof__mapping(p, &m), 1);
	other.build_id = "bee0";
	cr_assert_eq(pprof__mapping(p, &other), 2);
	other = m;
	other.has_functions = true;
	cr_assert_eq(pprof__mapping(p, &other), 3);
	other = m;
	other.offset = 0x1000;
	cr_assert_eq(pprof__mapping(p, &other), 4);
	other = m;
	other.build_id = NULL;
	cr_assert_eq(pprof__mapping(p, &other), 5);
	other.build_id = "";
	cr_assert_eq(pprof__mapping(p, &other), 5, "NULL and \"\" build ids are equal");
	cr_assert_eq(pprof__mapping(p, NULL), 0);
	pprof__free(p);
}

Test(pprof, location_dedup)
{
	struct pprof *p = ppt_new();
	struct pprof_mapping m = {.start = 0x1000, .limit = 0x2000, .file = "a"};
	uint64_t m1 = pprof__mapping(p, &m);
	uint64_t f1 = pprof__function(p, "f", NULL, NULL, 0);
	uint64_t f2 = pprof__function(p, "g", NULL, NULL, 0);
	struct pprof_line ln[2] = {{f1, 1}, {f2, 2}};
	struct pprof_line ln_other[2] = {{f1, 1}, {f2, 3}};
	struct pprof_line bad = {3, 1};

	cr_assert_eq(pprof__location(p, m1, 0x1100, ln, 2), 1);
	/* by address: the first call's lines win */
	cr_assert_eq(pprof__location(p, m1, 0x1100, ln_other, 1), 1);
	cr_assert_eq(pprof__location(p, m1, 0x1104, ln, 2), 2);
	cr_assert_eq(pprof__location(p, 0, 0x1100, ln, 2), 3, "other mapping, other location");
	/* without an address: by lines */
	cr_assert_eq(pprof__location(p, m1, 0, ln, 2), 4);
	cr_assert_eq(pprof__location(p, m1, 0, ln, 2), 4);
	cr_assert_eq(pprof__location(p, m1, 0, ln_other, 2), 5);
	cr_assert_eq(pprof__location(p, m1, 0, ln, 1), 6);
	/* ids that don't exist are errors */
	cr_assert_eq(pprof__location(p, 2, 0x1100, ln, 2), 0);
	cr_assert_eq(pprof__location(p, m1, 0x1200, &bad, 1), 0);
	cr_assert_eq(pprof__location(p, m1, 0x1200, NULL, 1), 0);
	pprof__free(p);
}

/* ---- samples ------------------------------------------------------------- */

Test(pprof, sample_merge, .init = ppt_setup, .fini = ppt_teardown)
{
	char *text = NULL;
	size_t len = 0;

	/* 5 adds, the second merged into the first */
	cr_assert_eq(pprof__sample_count(ppt_p), 4);
	cr_assert_eq(pprof__folded(ppt_p, 1, "tid", &text, &len), 0);
	/* tid is numeric, so it is no root frame; values add across samples */
	cr_assert_str_eq(text, "main 50\n"
			       "main;0x403abc 20\n"
			       "main;work;inl:x 80\n");
	cr_assert_eq(len, strlen(text));
	free(text);
}

Test(pprof, sample_invalid, .init = ppt_setup, .fini = ppt_teardown)
{
	const int64_t values[2] = {1, 1};
	const uint64_t bad_loc[] = {4};
	const uint64_t zero_loc[] = {0};
	const uint64_t good[] = {1};
	const struct pprof_label no_key = {NULL, "x", 0, NULL};

	cr_assert_eq(pprof__add_sample(ppt_p, bad_loc, 1, values, NULL, 0), -EINVAL);
	cr_assert_eq(pprof__add_sample(ppt_p, zero_loc, 1, values, NULL, 0), -EINVAL);
	cr_assert_eq(pprof__add_sample(ppt_p, good, 1, NULL, NULL, 0), -EINVAL);
	cr_assert_eq(pprof__add_sample(ppt_p, good, 1, values, &no_key, 1), -EINVAL);
	cr_assert_eq(pprof__sample_count(ppt_p), 4, "failed adds must not change the profile");
}

Test(pprof, sample_values_add_exactly)
{
	struct pprof *p = ppt_new();
	uint64_t f = pprof__function(p, "f", NULL, NULL, 0);
	struct pprof_line ln = {f, 0};
	uint64_t loc = pprof__location(p, 0, 0x10, &ln, 1);
	const int64_t big[2] = {INT64_MAX / 2, -7};
	char *text = NULL;
	size_t len;
	int i;

	for (i = 0; i < 2; i++)
		cr_assert_eq(pprof__add_sample(p, &loc, 1, big, NULL, 0), 0);
	cr_assert_eq(pprof__sample_count(p), 1);
	cr_assert_eq(pprof__folded(p, 0, NULL, &text, &len), 0);
	cr_assert_str_eq(text, "f 9223372036854775806\n");
	free(text);
	cr_assert_eq(pprof__folded(p, 1, NULL, &text, &len), 0);
	cr_assert_str_eq(text, "f -14\n");
	free(text);
	pprof__free(p);
}

/* ---- collapsed stacks ---------------------------------------------------- */

Test(pprof, folded_with_root, .init = ppt_setup, .fini = ppt_teardown)
{
	char *text = NULL;
	size_t len = 0;

	cr_assert_eq(pprof__folded(ppt_p, 0, "process_name", &text, &len), 0);
	/* root first; the inlined frame follows its caller; ';' in a name
	 * becomes ':'; the sample without the label has no root frame */
	cr_assert_str_eq(text, "app;main;0x403abc 2\n"
			       "app;main;work;inl:x 8\n"
			       "main 5\n");
	cr_assert_eq(len, strlen(text));
	free(text);
}

Test(pprof, folded_unknown_frames)
{
	struct pprof *p = ppt_new();
	uint64_t anon = pprof__function(p, "", NULL, NULL, 0);
	uint64_t f = pprof__function(p, "f\nx", NULL, NULL, 0);
	struct pprof_line la = {anon, 0}, lf = {f, 0};
	uint64_t locs[3];
	const int64_t one[2] = {1, 1};
	char *text = NULL;
	size_t len;

	locs[0] = pprof__location(p, 0, 0, NULL, 0);
	locs[1] = pprof__location(p, 0, 0xabc, &la, 1);
	locs[2] = pprof__location(p, 0, 0x10, &lf, 1);
	cr_assert_eq(pprof__add_sample(p, locs, 3, one, NULL, 0), 0);
	cr_assert_eq(pprof__add_sample(p, NULL, 0, one, NULL, 0), 0);
	cr_assert_eq(pprof__folded(p, 0, "process_name", &text, &len), 0);
	/* The newline was escaped by the string table (pprof/utf8.h). */
	cr_assert_str_eq(text, "[unknown] 1\n"
			       "f\\x0ax;0xabc;[unknown] 1\n");
	free(text);
	cr_assert_eq(pprof__folded(p, 2, NULL, &text, &len), -EINVAL);
	pprof__free(p);
}

Test(pprof, folded_empty)
{
	struct pprof *p = ppt_new();
	char *text = NULL;
	size_t len = 99;

	cr_assert_eq(pprof__folded(p, 0, NULL, &text, &len), 0);
	cr_assert_str_eq(text, "");
	cr_assert_eq(len, 0);
	free(text);
	pprof__free(p);
}

/* ---- encoding ------------------------------------------------------------ */

Test(pprof, encode_fields, .init = ppt_setup, .fini = ppt_teardown)
{
	/* sample 1: location_id [1 2] and value [7 70], both packed */
	static const uint8_t sample1_head[] = {0x0a, 0x02, 0x01, 0x02, 0x12, 0x02, 0x07, 0x46};
	uint8_t *buf = NULL;
	size_t len = 0;
	struct ppt_field f, g;
	int64_t cmt;

	pprof__set_time(ppt_p, 1700000000000000000, 60000000000);
	cmt = pprof__string(ppt_p, "lost samples: 3");
	cr_assert_eq(pprof__add_comment(ppt_p, "lost samples: 3"), 0);
	cr_assert_eq(pprof__set_default_sample_type(ppt_p, "cpu"), 0);
	cr_assert_eq(pprof__set_default_sample_type(ppt_p, "bogus"), -EINVAL);
	cr_assert_eq(pprof__encode(ppt_p, false, &buf, &len), 0);

	ppt_assert_string(buf, len, 0, "");
	ppt_assert_string(buf, len, 1, "samples");

	cr_assert_eq(ppt_count(buf, len, 1), 2, "sample_type");
	f = ppt_nth(buf, len, 1, 1);
	ppt_assert_string(buf, len, ppt_scalar(f.buf, f.len, 1), "cpu");
	ppt_assert_string(buf, len, ppt_scalar(f.buf, f.len, 2), "nanoseconds");

	cr_assert_eq(ppt_count(buf, len, 2), 4, "sample");
	f = ppt_nth(buf, len, 2, 0);
	cr_assert_geq(f.len, sizeof(sample1_head));
	cr_assert_arr_eq(f.buf, sample1_head, sizeof(sample1_head));
	cr_assert_eq(ppt_count(f.buf, f.len, 3), 2, "labels of sample 1");
	g = ppt_nth(f.buf, f.len, 3, 0);
	ppt_assert_string(buf, len, ppt_scalar(g.buf, g.len, 1), "process_name");
	ppt_assert_string(buf, len, ppt_scalar(g.buf, g.len, 2), "app");
	g = ppt_nth(f.buf, f.len, 3, 1);
	ppt_assert_string(buf, len, ppt_scalar(g.buf, g.len, 1), "tid");
	cr_assert_eq(ppt_scalar(g.buf, g.len, 3), 7);

	cr_assert_eq(ppt_count(buf, len, 3), 1, "mapping");
	f = ppt_nth(buf, len, 3, 0);
	cr_assert_eq(ppt_scalar(f.buf, f.len, 1), 1);
	cr_assert_eq(ppt_scalar(f.buf, f.len, 2), 0x400000);
	cr_assert_eq(ppt_scalar(f.buf, f.len, 3), 0x500000);
	ppt_assert_string(buf, len, ppt_scalar(f.buf, f.len, 5), "/usr/bin/app");
	ppt_assert_string(buf, len, ppt_scalar(f.buf, f.len, 6), "abcd");
	cr_assert_eq(ppt_scalar(f.buf, f.len, 7), 1, "has_functions");
	cr_assert_eq(ppt_scalar(f.buf, f.len, 8), 0, "has_filenames");
	cr_assert_eq(ppt_scalar(f.buf, f.len, 10), 1, "has_inline_frames");

	cr_assert_eq(ppt_count(buf, len, 4), 3, "location");
	f = ppt_nth(buf, len, 4, 0);
	cr_assert_eq(ppt_scalar(f.buf, f.len, 1), 1);
	cr_assert_eq(ppt_scalar(f.buf, f.len, 2), 1);
	cr_assert_eq(ppt_scalar(f.buf, f.len, 3), 0x401000);
	cr_assert_eq(ppt_count(f.buf, f.len, 4), 2, "lines of the inlined location");
	g = ppt_nth(f.buf, f.len, 4, 0);
	cr_assert_eq(ppt_scalar(g.buf, g.len, 1), ppt_inl, "innermost line first");
	cr_assert_eq(ppt_scalar(g.buf, g.len, 2), 12);
	g = ppt_nth(f.buf, f.len, 4, 1);
	cr_assert_eq(ppt_scalar(g.buf, g.len, 1), ppt_work);
	cr_assert_eq(ppt_scalar(g.buf, g.len, 2), 30);
	f = ppt_nth(buf, len, 4, 2);
	cr_assert_eq(ppt_count(f.buf, f.len, 4), 0, "l3 has no lines");

	cr_assert_eq(ppt_count(buf, len, 5), 3, "function");
	f = ppt_nth(buf, len, 5, 2);
	cr_assert_eq(ppt_scalar(f.buf, f.len, 1), 3);
	ppt_assert_string(buf, len, ppt_scalar(f.buf, f.len, 2), "inl;x");
	ppt_assert_string(buf, len, ppt_scalar(f.buf, f.len, 4), "app.h");
	cr_assert_eq(ppt_scalar(f.buf, f.len, 5), 10);

	cr_assert_eq(ppt_scalar(buf, len, 9), 1700000000000000000);
	cr_assert_eq(ppt_scalar(buf, len, 10), 60000000000);
	f = ppt_nth(buf, len, 11, 0);
	ppt_assert_string(buf, len, ppt_scalar(f.buf, f.len, 1), "cpu");
	cr_assert_eq(ppt_scalar(buf, len, 12), 10000000);
	f = ppt_nth(buf, len, 13, 0);
	cr_assert_eq(f.len, 1, "comment is a packed run of one index");
	cr_assert_eq(f.buf[0], (uint8_t)cmt);
	ppt_assert_string(buf, len, ppt_scalar(buf, len, 14), "cpu");
	free(buf);
}

Test(pprof, encode_gzip, .init = ppt_setup, .fini = ppt_teardown)
{
	uint8_t *raw = NULL, *gz = NULL, *back = NULL;
	size_t raw_len = 0, gz_len = 0;
	z_stream zs;

	cr_assert_eq(pprof__encode(ppt_p, false, &raw, &raw_len), 0);
	cr_assert_eq(pprof__encode(ppt_p, true, &gz, &gz_len), 0);
	cr_assert_geq(gz_len, 18);
	cr_assert_eq(gz[0], 0x1f, "gzip magic");
	cr_assert_eq(gz[1], 0x8b, "gzip magic");

	back = malloc(raw_len + 1);
	cr_assert_not_null(back);
	memset(&zs, 0, sizeof(zs));
	cr_assert_eq(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = gz;
	zs.avail_in = (uInt)gz_len;
	zs.next_out = back;
	zs.avail_out = (uInt)raw_len + 1;
	cr_assert_eq(inflate(&zs, Z_FINISH), Z_STREAM_END);
	cr_assert_eq(zs.total_out, raw_len);
	cr_assert_arr_eq(back, raw, raw_len);
	inflateEnd(&zs);
	free(back);
	free(raw);
	free(gz);
}

/*
 * The size of a 60 s, 19 Hz profile of a busy postgres: 20k distinct
 * locations and 5k distinct stacks.  The bound is ~100x what it takes, so
 * only an accidentally quadratic path can trip it.
 */
Test(pprof, encode_is_fast)
{
	const size_t nfuncs = 8000, nlocs = 20000, nsamples = 5000, depth = 40;
	struct pprof *p = ppt_new();
	struct pprof_mapping m = {.start = 0x400000, .limit = 0x4000000, .file = "/usr/bin/pg"};
	struct timespec t0, t1;
	uint64_t mid, stack[40], rnd = 88172645463325252ull;
	struct pprof_line ln[2];
	const int64_t values[2] = {1, 52631578};
	const struct pprof_label labels[] = {{"pid", NULL, 4242, NULL},
					     {"process_name", "postgres", 0, NULL}};
	uint8_t *out = NULL;
	char *text = NULL;
	size_t i, j, len;
	char name[48];
	double ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	mid = pprof__mapping(p, &m);
	for (i = 0; i < nfuncs; i++) {
		snprintf(name, sizeof(name), "pg_function_number_%zu", i);
		cr_assert_eq(pprof__function(p, name, NULL, "src/backend/x.c", (int64_t)i), i + 1);
	}
	for (i = 0; i < nlocs; i++) {
		ln[0] = (struct pprof_line){i % nfuncs + 1, (int64_t)i};
		ln[1] = (struct pprof_line){(i * 7) % nfuncs + 1, (int64_t)i + 1};
		cr_assert_eq(pprof__location(p, mid, 0x400000 + 16 * i, ln, 1 + i % 2), i + 1);
	}
	for (i = 0; i < nsamples; i++) {
		for (j = 0; j < depth; j++) {
			rnd ^= rnd << 13;
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			stack[j] = rnd % nlocs + 1;
		}
		cr_assert_eq(pprof__add_sample(p, stack, depth, values, labels, 2), 0);
	}
	cr_assert_eq(pprof__sample_count(p), nsamples);
	cr_assert_eq(pprof__encode(p, true, &out, &len), 0);
	cr_assert_eq(pprof__folded(p, 0, "process_name", &text, &len), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	cr_assert_lt(ms, 2000.0, "build + encode + fold took %.1f ms", ms);
	free(out);
	free(text);
	pprof__free(p);
}
