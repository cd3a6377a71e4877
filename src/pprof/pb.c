// SPDX-License-Identifier: BSD-2-Clause
/*
 * pb: protobuf wire primitives.  See pb.h for the contract; the reference is
 * https://protobuf.dev/programming-guides/encoding/.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pprof/pb.h"

enum pb_wire_type {
	PB_WIRE_VARINT = 0,
	PB_WIRE_LEN = 2,
};

void pb__init(struct pb_buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->err = 0;
}

void pb__release(struct pb_buf *b)
{
	if (!b)
		return;
	free(b->data);
	pb__init(b);
}

/* The slow path of pb_reserve(): grows the buffer or records -ENOMEM. */
static __attribute__((noinline)) bool pb_grow(struct pb_buf *b, size_t n)
{
	size_t cap;
	uint8_t *data;

	if (b->err)
		return false;
	if (n > SIZE_MAX / 2 - b->len) {
		b->err = -ENOMEM;
		return false;
	}
	/* Doubling keeps appends amortised O(1) for profiles of any size. */
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n)
		cap *= 2;
	data = realloc(b->data, cap);
	if (!data) {
		b->err = -ENOMEM;
		return false;
	}
	b->data = data;
	b->cap = cap;
	return true;
}

/*
 * Makes room for n more bytes; false (and b->err set) when it can't.  Kept
 * inline because every field goes through it: a profile is mostly small
 * varints, so call overhead, not copying, is what encoding costs.
 */
static inline bool pb_reserve(struct pb_buf *b, size_t n)
{
	if (__builtin_expect(!b->err && n <= b->cap - b->len, 1))
		return true;
	return pb_grow(b, n);
}

size_t pb__varint_size(uint64_t v)
{
	/* ceil(significant bits / 7) without a data-dependent loop: packed
	 * runs of location ids mix 1-, 2- and 3-byte values unpredictably. */
	unsigned int bits = 64 - (unsigned int)__builtin_clzll(v | 1);

	return (bits * 9 + 64) / 64;
}

/* Caller has reserved pb__varint_size(v) bytes. */
static void pb_put_varint_unchecked(struct pb_buf *b, uint64_t v)
{
	uint8_t *p = b->data + b->len;

	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	b->len = (size_t)(p - b->data);
}

void pb__put_varint(struct pb_buf *b, uint64_t v)
{
	if (!pb_reserve(b, 10))
		return;
	pb_put_varint_unchecked(b, v);
}

void pb__put_raw(struct pb_buf *b, const void *data, size_t len)
{
	if (!len || !pb_reserve(b, len))
		return;
	memcpy(b->data + b->len, data, len);
	b->len += len;
}

/* Room for a tag (a 32-bit field number and 3 type bits) and a varint. */
#define PB_TAG_VARINT_MAX (5 + 10)

static void pb_put_tag_unchecked(struct pb_buf *b, uint32_t field, enum pb_wire_type type)
{
	pb_put_varint_unchecked(b, (uint64_t)field << 3 | type);
}

void pb__field_varint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	if (!v || !pb_reserve(b, PB_TAG_VARINT_MAX))
		return;
	pb_put_tag_unchecked(b, field, PB_WIRE_VARINT);
	pb_put_varint_unchecked(b, v);
}

/* Tag and length of a length-delimited field, checked for room once. */
static bool pb_put_len_header(struct pb_buf *b, uint32_t field, size_t len)
{
	if (!pb_reserve(b, PB_TAG_VARINT_MAX))
		return false;
	pb_put_tag_unchecked(b, field, PB_WIRE_LEN);
	pb_put_varint_unchecked(b, len);
	return true;
}

/*
 * Written even when len is 0: an empty string is a real element of a
 * repeated field (string_table[0] is ""), and an empty sub-message still
 * counts as one element.
 */
void pb__field_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len)
{
	if (pb_put_len_header(b, field, len))
		pb__put_raw(b, data, len);
}

void pb__field_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t i, len = 0;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		len += pb__varint_size(v[i]);
	/* One reservation for the whole run: this is the hot loop of a sample. */
	if (!pb_put_len_header(b, field, len) || !pb_reserve(b, len))
		return;
	for (i = 0; i < n; i++)
		pb_put_varint_unchecked(b, v[i]);
}

size_t pb__get_varint(const uint8_t *data, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	for (i = 0; i < len && i < 10; i++) {
		/* The 10th byte holds only bit 63; anything more overflows. */
		if (i == 9 && data[i] > 1)
			return 0;
		x |= (uint64_t)(data[i] & 0x7f) << (7 * i);
		if (!(data[i] & 0x80)) {
			*v = x;
			return i + 1;
		}
	}
	return 0;
}
