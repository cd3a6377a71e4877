// SPDX-License-Identifier: BSD-2-Clause
/* pprof encoder: the builder's tables as profile.proto, optionally gzipped. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pprof/pb.h"
#include "pprof/pprof.h"
#include "pprof/pprof_int.h"

/* Field numbers from profile.proto. */
/* Field numbers from profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/* ---- encoding ---------------------------------------------------------- */

/* Appends sub as an embedded message, then empties sub for reuse. */
static void put_msg(struct pb_buf *b, uint32_t field, struct pb_buf *sub)
{
	if (sub->err && !b->err)
		b->err = sub->err;
	pb__field_bytes(b, field, sub->data, sub->len);
	sub->len = 0;
}

static void put_value_type(struct pb_buf *b, uint32_t field, const struct pvt *vt,
			   struct pb_buf *msg)
{
	pb__field_varint(msg, VALUE_TYPE_TYPE, (uint64_t)vt->type);
	pb__field_varint(msg, VALUE_TYPE_UNIT, (uint64_t)vt->unit);
	put_msg(b, field, msg);
}

static void put_samples(const struct pprof *p, struct pb_buf *b, struct pb_buf *msg,
			struct pb_buf *sub)
{
	const struct psample *s;
	const struct plabel *l;
	size_t i, j;

	for (i = 0; i < p->nsamples; i++) {
		s = &p->samples[i];
		/* A profile whose samples all have empty stacks (coarsened to its
		 * roots) has no sample_locs array: NULL + 0 is undefined. */
		pb__field_packed(msg, SAMPLE_LOCATION_ID,
				 s->nlocs ? p->sample_locs + s->loc_off : NULL, s->nlocs);
		/* int64 and uint64 may alias; the wire form of both is the same. */
		pb__field_packed(msg, SAMPLE_VALUE, (const uint64_t *)(p->values + i * p->ntypes),
				 p->ntypes);
		for (j = 0; j < s->nlabels; j++) {
			l = &p->labels[s->label_off + j];
			pb__field_varint(sub, LABEL_KEY, (uint64_t)l->key);
			pb__field_varint(sub, LABEL_STR, (uint64_t)l->str);
			pb__field_varint(sub, LABEL_NUM, (uint64_t)l->num);
			pb__field_varint(sub, LABEL_NUM_UNIT, (uint64_t)l->num_unit);
			put_msg(msg, SAMPLE_LABEL, sub);
		}
		put_msg(b, PROFILE_SAMPLE, msg);
	}
}

static void put_mappings(const struct pprof *p, struct pb_buf *b, struct pb_buf *msg)
{
	const struct pmapping *m;
	size_t i;

	for (i = 0; i < p->nmappings; i++) {
		m = &p->mappings[i];
		pb__field_varint(msg, MAPPING_ID, i + 1);
		pb__field_varint(msg, MAPPING_MEMORY_START, m->start);
		pb__field_varint(msg, MAPPING_MEMORY_LIMIT, m->limit);
		pb__field_varint(msg, MAPPING_FILE_OFFSET, m->offset);
		pb__field_varint(msg, MAPPING_FILENAME, (uint64_t)m->file);
		pb__field_varint(msg, MAPPING_BUILD_ID, (uint64_t)m->build_id);
		pb__field_varint(msg, MAPPING_HAS_FUNCTIONS, m->has_functions);
		pb__field_varint(msg, MAPPING_HAS_FILENAMES, m->has_filenames);
		pb__field_varint(msg, MAPPING_HAS_LINE_NUMBERS, m->has_line_numbers);
		pb__field_varint(msg, MAPPING_HAS_INLINE_FRAMES, m->has_inline_frames);
		put_msg(b, PROFILE_MAPPING, msg);
	}
}

static void put_locations(const struct pprof *p, struct pb_buf *b, struct pb_buf *msg,
			  struct pb_buf *sub)
{
	const struct plocation *loc;
	const struct pprof_line *ln;
	size_t i, j;

	for (i = 0; i < p->nlocations; i++) {
		loc = &p->locations[i];
		pb__field_varint(msg, LOCATION_ID, i + 1);
		pb__field_varint(msg, LOCATION_MAPPING_ID, loc->mapping_id);
		pb__field_varint(msg, LOCATION_ADDRESS, loc->address);
		for (j = 0; j < loc->nlines; j++) {
			ln = &p->lines[loc->line_off + j];
			pb__field_varint(sub, LINE_FUNCTION_ID, ln->function_id);
			pb__field_varint(sub, LINE_LINE, (uint64_t)ln->line);
			put_msg(msg, LOCATION_LINE, sub);
		}
		put_msg(b, PROFILE_LOCATION, msg);
	}
}

static void put_functions(const struct pprof *p, struct pb_buf *b, struct pb_buf *msg)
{
	const struct pfunction *f;
	size_t i;

	for (i = 0; i < p->nfunctions; i++) {
		f = &p->functions[i];
		pb__field_varint(msg, FUNCTION_ID, i + 1);
		pb__field_varint(msg, FUNCTION_NAME, (uint64_t)f->name);
		pb__field_varint(msg, FUNCTION_SYSTEM_NAME, (uint64_t)f->system_name);
		pb__field_varint(msg, FUNCTION_FILENAME, (uint64_t)f->filename);
		pb__field_varint(msg, FUNCTION_START_LINE, (uint64_t)f->start_line);
		put_msg(b, PROFILE_FUNCTION, msg);
	}
}

static void put_profile(const struct pprof *p, struct pb_buf *b, struct pb_buf *msg,
			struct pb_buf *sub)
{
	size_t i;

	for (i = 0; i < p->ntypes; i++)
		put_value_type(b, PROFILE_SAMPLE_TYPE, &p->sample_types[i], msg);
	put_samples(p, b, msg, sub);
	put_mappings(p, b, msg);
	put_locations(p, b, msg, sub);
	put_functions(p, b, msg);
	for (i = 0; i < p->nstrs; i++)
		pb__field_bytes(b, PROFILE_STRING_TABLE, p->strs[i].s, p->strs[i].len);
	pb__field_varint(b, PROFILE_TIME_NANOS, (uint64_t)p->time_nanos);
	pb__field_varint(b, PROFILE_DURATION_NANOS, (uint64_t)p->duration_nanos);
	put_value_type(b, PROFILE_PERIOD_TYPE, &p->period_type, msg);
	pb__field_varint(b, PROFILE_PERIOD, (uint64_t)p->period);
	pb__field_packed(b, PROFILE_COMMENT, (const uint64_t *)p->comments, p->ncomments);
	pb__field_varint(b, PROFILE_DEFAULT_SAMPLE_TYPE, (uint64_t)p->default_sample_type);
}

/*
 * One-shot gzip (windowBits 15 + 16 selects the gzip wrapper).  Best speed,
 * as Go's runtime/pprof does: profiles are written often and the symbol
 * strings compress well at any level.
 */
static int gzip_buf(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream zs;
	uint8_t *buf = NULL;
	uLong bound;
	int err;

	if (len > UINT_MAX)
		return -EFBIG;
	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&zs, (uLong)len);
	if (bound > UINT_MAX) {
		err = -EFBIG;
		goto cleanup;
	}
	buf = malloc(bound);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = buf;
	zs.avail_out = (uInt)bound;
	/* deflateBound() leaves room for everything, so one call finishes. */
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		err = -EIO;
		goto cleanup;
	}
	*out = buf;
	*out_len = zs.total_out;
	buf = NULL;
	err = 0;
cleanup:
	deflateEnd(&zs);
	free(buf);
	return err;
}

int pprof__encode(struct pprof *p, bool gzip, uint8_t **out, size_t *out_len)
{
	struct pb_buf b, msg, sub;
	int err;

	if (!p || !out || !out_len)
		return -EINVAL;
	pb__init(&b);
	pb__init(&msg);
	pb__init(&sub);
	put_profile(p, &b, &msg, &sub);
	err = b.err;
	if (err)
		goto cleanup;
	if (gzip) {
		err = gzip_buf(b.data, b.len, out, out_len);
		goto cleanup;
	}
	*out = b.data;
	*out_len = b.len;
	pb__init(&b); /* ownership moved to *out */
cleanup:
	pb__release(&b);
	pb__release(&msg);
	pb__release(&sub);
	return err;
}

int pprof__encoded_size(struct pprof *p, size_t *len)
{
	uint8_t *buf;
	int err;

	err = pprof__encode(p, false, &buf, len);
	if (!err)
		free(buf);
	return err;
}
