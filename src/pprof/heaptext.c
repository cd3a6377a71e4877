// SPDX-License-Identifier: BSD-2-Clause
/*
 * heaptext: a heap profile in Go's legacy text form, as runtime/pprof
 * writes /debug/pprof/heap?debug=1 (writeHeapInternal):
 *
 *	heap profile: INUSE_OBJ: INUSE_BYTES [ALLOC_OBJ: ALLOC_BYTES] @ heap/2*RATE
 *	INUSE_OBJ: INUSE_BYTES [ALLOC_OBJ: ALLOC_BYTES] @ 0xPC 0xPC ...
 *	#	0xPC	function	file:line
 *	(a blank line after each record)
 *
 * The counts are as sampled, not scaled: readers (go tool pprof's legacy
 * parser) scale them by the rate in the header, as Go's own do.  The rate
 * is written doubled, as Go does for the sake of early pprof.  Go's frame
 * lines say function+offset; profd's profiles do not keep a function's
 * start, so they say the function alone.  Lines starting with '#' are
 * for people; the profile's comments follow the records as such lines,
 * where Go puts runtime.MemStats.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "pprof/pprof.h"
#include "pprof/pprof_int.h"

/* A name or path on one line: control bytes would break the form. */
static void put_clean(struct strbuf *sb, const char *s)
{
	size_t start = sb->len;

	if (strbuf__adds(sb, s ? s : ""))
		return;
	for (size_t i = start; i < sb->len; i++)
		if ((unsigned char)sb->buf[i] < 0x20 || sb->buf[i] == 0x7f)
			sb->buf[i] = '?';
}

static long type_index(const struct pprof *p, const char *name)
{
	for (size_t i = 0; i < p->ntypes; i++)
		if (!strcmp(p->strs[p->sample_types[i].type].s, name))
			return (long)i;
	return -1;
}

static void put_record_lines(struct strbuf *sb, const struct pprof *p, const struct psample *s)
{
	for (size_t j = 0; j < s->nlocs; j++) {
		const struct plocation *l = &p->locations[p->sample_locs[s->loc_off + j] - 1];

		/* The allocator's synthetic leaf has no address: not a frame Go would show. */
		if (!l->address)
			continue;
		if (!l->nlines) {
			strbuf__addf(sb, "#\t%#" PRIx64 "\n", l->address);
			continue;
		}
		for (size_t k = 0; k < l->nlines; k++) {
			const struct pprof_line *ln = &p->lines[l->line_off + k];
			const struct pfunction *f = &p->functions[ln->function_id - 1];

			strbuf__addf(sb, "#\t%#" PRIx64 "\t", l->address);
			put_clean(sb, p->strs[f->name].s);
			strbuf__adds(sb, "\t");
			put_clean(sb, p->strs[f->filename].s);
			strbuf__addf(sb, ":%" PRId64 "\n", ln->line);
		}
	}
	strbuf__adds(sb, "\n");
}

int pprof__heap_text(const struct pprof *p, char **out, size_t *len)
{
	long ix[4] = {type_index(p, "inuse_objects"), type_index(p, "inuse_space"),
		      type_index(p, "alloc_objects"), type_index(p, "alloc_space")};
	int64_t total[4] = {0};
	struct strbuf sb = {0};
	int err;

	for (int i = 0; i < 4; i++)
		if (ix[i] < 0)
			return -EINVAL;
	for (size_t i = 0; i < p->nsamples; i++)
		for (int k = 0; k < 4; k++)
			total[k] += p->values[i * p->ntypes + ix[k]];
	/* As Go: a profile whose alloc and in-use bytes are equal would be read
	 * as a two-column one, so the header's alloc bytes never equal them. */
	strbuf__addf(&sb, "heap profile: %" PRId64 ": %" PRId64 " [%" PRId64 ": %" PRId64
		     "] @ heap/%" PRId64 "\n",
		     total[0], total[1], total[2], total[3] + (total[3] == total[1]),
		     2 * p->period);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct psample *s = &p->samples[i];
		const int64_t *v = &p->values[i * p->ntypes];

		strbuf__addf(&sb, "%" PRId64 ": %" PRId64 " [%" PRId64 ": %" PRId64 "] @",
			     v[ix[0]], v[ix[1]], v[ix[2]], v[ix[3]]);
		for (size_t j = 0; j < s->nlocs; j++) {
			uint64_t addr = p->locations[p->sample_locs[s->loc_off + j] - 1].address;

			if (addr)
				strbuf__addf(&sb, " %#" PRIx64, addr);
		}
		strbuf__adds(&sb, "\n");
		put_record_lines(&sb, p, s);
	}
	for (size_t i = 0; i < p->ncomments; i++) {
		strbuf__adds(&sb, "# ");
		put_clean(&sb, p->strs[p->comments[i]].s);
		strbuf__adds(&sb, "\n");
	}
	err = strbuf__err(&sb);
	if (err) {
		strbuf__free(&sb);
		return err;
	}
	*out = strbuf__detach(&sb, len);
	return 0;
}
