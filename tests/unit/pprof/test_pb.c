// SPDX-License-Identifier: BSD-2-Clause
/* Protobuf wire primitives, checked byte for byte against the encoding
 * examples of https://protobuf.dev/programming-guides/encoding/. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "pprof/pb.h"

struct pbt_varint_case {
	uint64_t v;
	size_t size;
	uint8_t bytes[10];
};

ParameterizedTestParameters(pb, varint)
{
	static struct pbt_varint_case cases[] = {
		{0, 1, {0x00}},
		{1, 1, {0x01}},
		{127, 1, {0x7f}},
		{128, 2, {0x80, 0x01}},
		{150, 2, {0x96, 0x01}},
		{16383, 2, {0xff, 0x7f}},
		{16384, 3, {0x80, 0x80, 0x01}},
		{UINT32_MAX, 5, {0xff, 0xff, 0xff, 0xff, 0x0f}},
		{(uint64_t)1 << 63,
		 10,
		 {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
		{UINT64_MAX, 10, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		/* int64 -2: negative values are 10-byte two's complement */
		{(uint64_t)(int64_t)-2,
		 10,
		 {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	};

	return cr_make_param_array(struct pbt_varint_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct pbt_varint_case *c, pb, varint)
{
	struct pb_buf b;
	uint64_t back = 12345;

	pb__init(&b);
	pb__put_varint(&b, c->v);
	cr_assert_eq(b.err, 0);
	cr_assert_eq(pb__varint_size(c->v), c->size, "size of %llu", (unsigned long long)c->v);
	cr_assert_eq(b.len, c->size, "encoded length of %llu", (unsigned long long)c->v);
	cr_assert_arr_eq(b.data, c->bytes, c->size, "bytes of %llu", (unsigned long long)c->v);
	cr_assert_eq(pb__get_varint(b.data, b.len, &back), c->size);
	cr_assert_eq(back, c->v);
	pb__release(&b);
}

/* Checks that b holds exactly the len bytes of want, then frees b. */
static void pbt_expect(struct pb_buf *b, const uint8_t *want, size_t len)
{
	cr_assert_eq(b->err, 0);
	cr_assert_eq(b->len, len, "got %zu bytes, want %zu", b->len, len);
	if (len)
		cr_assert_arr_eq(b->data, want, len);
	pb__release(b);
	cr_assert_null(b->data);
	cr_assert_eq(b->len, 0);
}

Test(pb, field_varint)
{
	static const uint8_t f1_150[] = {0x08, 0x96, 0x01};
	static const uint8_t f16_1[] = {0x80, 0x01, 0x01};
	static const uint8_t f3_minus1[] = {0x18, 0xff, 0xff, 0xff, 0xff, 0xff,
					    0xff, 0xff, 0xff, 0xff, 0x01};
	struct pb_buf b;

	pb__init(&b);
	pb__field_varint(&b, 1, 150);
	pbt_expect(&b, f1_150, sizeof(f1_150));

	/* field numbers >= 16 need a two-byte tag */
	pb__field_varint(&b, 16, 1);
	pbt_expect(&b, f16_1, sizeof(f16_1));

	pb__field_varint(&b, 3, (uint64_t)(int64_t)-1);
	pbt_expect(&b, f3_minus1, sizeof(f3_minus1));

	/* proto3 default: a zero scalar is not written at all */
	pb__field_varint(&b, 5, 0);
	pbt_expect(&b, NULL, 0);
}

Test(pb, field_bytes)
{
	static const uint8_t testing[] = {0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'};
	static const uint8_t empty[] = {0x32, 0x00};
	struct pb_buf b;

	pb__init(&b);
	pb__field_bytes(&b, 2, "testing", 7);
	pbt_expect(&b, testing, sizeof(testing));

	/* unlike scalars, an empty string is an element (string_table[0]) */
	pb__field_bytes(&b, 6, "", 0);
	pbt_expect(&b, empty, sizeof(empty));
}

Test(pb, field_packed)
{
	static const uint64_t vals[] = {3, 270, 86942};
	static const uint8_t want[] = {0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05};
	static const uint64_t big[] = {0, UINT64_MAX};
	static const uint8_t want_big[] = {0x12, 0x0b, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff,
					   0xff, 0xff, 0xff, 0xff, 0x01};
	struct pb_buf b;

	pb__init(&b);
	pb__field_packed(&b, 4, vals, 3);
	pbt_expect(&b, want, sizeof(want));

	/* zeros inside a packed run are kept: they are values, not defaults */
	pb__field_packed(&b, 2, big, 2);
	pbt_expect(&b, want_big, sizeof(want_big));

	pb__field_packed(&b, 4, vals, 0);
	pbt_expect(&b, NULL, 0);
}

Test(pb, get_varint_malformed)
{
	static const uint8_t truncated[] = {0x80, 0x80};
	static const uint8_t overflow[] = {0xff, 0xff, 0xff, 0xff, 0xff,
					   0xff, 0xff, 0xff, 0xff, 0x02};
	static const uint8_t too_long[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					   0x80, 0x80, 0x80, 0x80, 0x00};
	static const uint8_t trailing[] = {0x96, 0x01, 0xff};
	uint64_t v = 42;

	cr_assert_eq(pb__get_varint(truncated, 0, &v), 0);
	cr_assert_eq(pb__get_varint(truncated, sizeof(truncated), &v), 0);
	cr_assert_eq(pb__get_varint(overflow, sizeof(overflow), &v), 0);
	cr_assert_eq(pb__get_varint(too_long, sizeof(too_long), &v), 0);
	cr_assert_eq(v, 42, "a failed decode must not write the result");
	cr_assert_eq(pb__get_varint(trailing, sizeof(trailing), &v), 2);
	cr_assert_eq(v, 150);
}

Test(pb, error_is_sticky)
{
	struct pb_buf b;

	pb__init(&b);
	pb__put_varint(&b, 1);
	b.err = -ENOMEM;
	pb__put_varint(&b, 300);
	pb__field_bytes(&b, 2, "abc", 3);
	pb__put_raw(&b, "xyz", 3);
	cr_assert_eq(b.len, 1, "writes after an error must be dropped");
	cr_assert_eq(b.err, -ENOMEM);
	pb__release(&b);
	cr_assert_eq(b.err, 0);
}

Test(pb, grows_and_round_trips)
{
	const size_t n = 100000;
	struct pb_buf b;
	size_t i, off = 0, used;
	uint64_t v;

	pb__init(&b);
	for (i = 0; i < n; i++)
		pb__put_varint(&b, i * i * 2654435761u);
	cr_assert_eq(b.err, 0);
	for (i = 0; i < n; i++) {
		used = pb__get_varint(b.data + off, b.len - off, &v);
		cr_assert_neq(used, 0, "varint %zu malformed", i);
		cr_assert_eq(v, i * i * 2654435761u, "varint %zu", i);
		off += used;
	}
	cr_assert_eq(off, b.len);
	pb__release(&b);
}
