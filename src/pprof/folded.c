// SPDX-License-Identifier: BSD-2-Clause
/*
 * Collapsed stacks ("root;...;leaf N\n"), the text flamegraph.pl reads,
 * built on pprof__for_each_stack(): every sample's frames are joined, equal
 * texts summed (two call sites in one function make one text), sorted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/htab.h"
#include "lib/strbuf.h"
#include "pprof/pprof.h"
#include "pprof/pprof_int.h"

struct fold_entry {
	size_t off, len;	/* the text, in fold.pool */
	int64_t sum;
};

struct fold {
	struct fold_entry *v;
	size_t n, cap;
	struct htab index;
	struct strbuf pool;	/* every distinct text */
	struct strbuf line;	/* the one being built */
};

static bool fold_eq(const void *ctx, size_t pos, const void *key)
{
	const struct fold *f = ctx;
	const struct strbuf *k = key;

	return f->v[pos].len == k->len && !memcmp(f->pool.buf + f->v[pos].off, k->buf, k->len);
}

/* ';' separates frames and '\n' stacks, so neither may appear in a name. */
static void put_name(struct strbuf *sb, const char *s)
{
	size_t start = sb->len;

	if (strbuf__adds(sb, s))
		return;
	for (size_t i = start; i < sb->len; i++) {
		if (sb->buf[i] == ';')
			sb->buf[i] = ':';
		else if (sb->buf[i] == '\n' || sb->buf[i] == '\r')
			sb->buf[i] = ' ';
	}
}

static int fold_stack(const struct pprof_frame *frames, size_t n, int64_t value, void *ctx)
{
	struct fold *f = ctx;
	struct htab_slot *slot;
	uint32_t h;
	long pos;
	int err;

	strbuf__reset(&f->line);
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf__add(&f->line, ";", 1);
		put_name(&f->line, frames[i].name);
	}
	/* flamegraph.pl needs at least one frame before the count. */
	if (!n)
		strbuf__adds(&f->line, "[unknown]");
	err = strbuf__err(&f->line) ?: htab__reserve(&f->index);
	if (err)
		return err;
	h = hash__final(hash__bytes(HASH_SEED, f->line.buf, f->line.len));
	pos = htab__find(&f->index, h, fold_eq, f, &f->line, &slot);
	if (pos >= 0) {
		pprof__values_add(&f->v[pos].sum, &value, 1);
		return 0;
	}
	err = array__grow(&f->v, &f->cap, f->n + 1, sizeof(*f->v));
	if (err)
		return err;
	f->v[f->n] = (struct fold_entry){f->pool.len, f->line.len, value};
	err = strbuf__add(&f->pool, f->line.buf, f->line.len);
	if (err)
		return err;
	htab__set(&f->index, slot, h, f->n++);
	return 0;
}

static const char *sort_pool;

static int entry_cmp(const void *a, const void *b)
{
	const struct fold_entry *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(sort_pool + x->off, sort_pool + y->off, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

int pprof__folded(struct pprof *p, size_t value_index, const char *root_label, char **out,
		  size_t *out_len)
{
	struct fold f = {};
	struct strbuf text = {};
	int err;

	if (!p || !out || !out_len)
		return -EINVAL;
	err = pprof__for_each_stack(p, value_index, root_label, fold_stack, &f);
	if (err)
		goto cleanup;
	/* Sorted, as flamegraph.pl's own collapse scripts write them. */
	sort_pool = f.pool.buf;
	if (f.n)
		qsort(f.v, f.n, sizeof(*f.v), entry_cmp);
	for (size_t i = 0; i < f.n; i++) {
		/* A stack that sums to 0 would draw nothing. */
		if (!f.v[i].sum)
			continue;
		strbuf__add(&text, f.pool.buf + f.v[i].off, f.v[i].len);
		strbuf__addf(&text, " %" PRId64 "\n", f.v[i].sum);
	}
	*out = strbuf__detach(&text, out_len);
	err = *out ? 0 : -ENOMEM;
cleanup:
	free(f.v);
	htab__free(&f.index);
	strbuf__free(&f.pool);
	strbuf__free(&f.line);
	strbuf__free(&text);
	return err;
}
