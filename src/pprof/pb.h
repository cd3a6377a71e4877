/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pb: the protobuf wire format, as much of it as profile.proto needs:
 * varints, length-delimited fields and packed repeated fields.
 * A pb_buf records the first error (-ENOMEM) and ignores writes after it,
 * so callers can write a whole message and check once at the end.
 */
#ifndef PROFD_PB_H
#define PROFD_PB_H

#include <stddef.h>
#include <stdint.h>

struct pb_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int err;
};

void pb__init(struct pb_buf *b);
void pb__release(struct pb_buf *b);
/* Bytes a varint of v takes (1..10). */
size_t pb__varint_size(uint64_t v);
void pb__put_varint(struct pb_buf *b, uint64_t v);
void pb__put_raw(struct pb_buf *b, const void *data, size_t len);
/* Field helpers: proto3 skips zero scalars; these write nothing for 0. */
void pb__field_varint(struct pb_buf *b, uint32_t field, uint64_t v);
void pb__field_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len);
/* A packed repeated uint64/int64 field (int64 as two's complement varint). */
void pb__field_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n);
/* Decode one varint from data[0..len); returns bytes used, 0 if malformed. */
size_t pb__get_varint(const uint8_t *data, size_t len, uint64_t *v);

#endif
