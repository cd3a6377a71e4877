// SPDX-License-Identifier: BSD-2-Clause
/*
 * coarsen: a built profile made to fit a receiver's limits (Pyroscope's
 * sample count and size), by merging labels, then folding rare stacks into
 * their callers (the contract: pprof.h, pprof__coarsen).
 *
 * Both steps build a new profile from the old one's tables: only what the
 * kept samples use (locations, functions, mappings, strings) is copied, so
 * the size shrinks with the samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/htab.h"
#include "pprof/pprof.h"
#include "pprof/pprof_int.h"

#define MAX_SIZE_ROUNDS 16	/* step 2's tries at the size limit, each with fewer samples */
#define NO_PARENT UINT32_MAX
#define COMMENT_ROOM 640	/* bytes kept free for the comment that says what was done */

/* ---- copying a profile ------------------------------------------------- */

struct copy {
	const struct pprof *src;
	struct pprof *dst;
	uint64_t *mappings;	/* src id - 1 -> dst id; 0: not copied yet */
	uint64_t *functions;
	uint64_t *locations;
	struct pprof_line *lines;	/* scratch for one location */
	size_t lines_cap;
};

static const char *str(const struct pprof *p, int64_t i)
{
	return p->strs[i].s;
}

static uint64_t copy_mapping(struct copy *c, uint64_t id)
{
	const struct pmapping *m;
	struct pprof_mapping pm;

	if (!id)
		return 0;
	if (c->mappings[id - 1])
		return c->mappings[id - 1];
	m = &c->src->mappings[id - 1];
	pm = (struct pprof_mapping){
		.start = m->start, .limit = m->limit, .offset = m->offset,
		.file = str(c->src, m->file), .build_id = m->build_id ? str(c->src, m->build_id) : NULL,
		.has_functions = m->has_functions, .has_filenames = m->has_filenames,
		.has_line_numbers = m->has_line_numbers, .has_inline_frames = m->has_inline_frames,
	};
	return c->mappings[id - 1] = pprof__mapping(c->dst, &pm);
}

static uint64_t copy_function(struct copy *c, uint64_t id)
{
	const struct pfunction *f = &c->src->functions[id - 1];

	if (c->functions[id - 1])
		return c->functions[id - 1];
	return c->functions[id - 1] = pprof__function(c->dst, str(c->src, f->name),
						     str(c->src, f->system_name),
						     str(c->src, f->filename), f->start_line);
}

static uint64_t copy_location(struct copy *c, uint64_t id)
{
	const struct plocation *loc = &c->src->locations[id - 1];
	uint64_t mid = 0;

	if (c->locations[id - 1])
		return c->locations[id - 1];
	if (array__grow(&c->lines, &c->lines_cap, loc->nlines ?: 1, sizeof(*c->lines)))
		return 0;
	for (size_t i = 0; i < loc->nlines; i++) {
		const struct pprof_line *ln = &c->src->lines[loc->line_off + i];

		c->lines[i].function_id = copy_function(c, ln->function_id);
		c->lines[i].line = ln->line;
		if (!c->lines[i].function_id)
			return 0;
	}
	if (loc->mapping_id && !(mid = copy_mapping(c, loc->mapping_id)))
		return 0;
	return c->locations[id - 1] = pprof__location(c->dst, mid, loc->address, c->lines,
						     loc->nlines);
}

/* Is the label key (src's string index) one of keep's? */
static bool kept_key(const int64_t *keep, size_t nkeep, int64_t key)
{
	for (size_t i = 0; i < nkeep; i++)
		if (keep[i] == key)
			return true;
	return false;
}

/*
 * A new profile of src's samples: sample i cut to its depth[i] outermost
 * locations (all of them when depth is NULL), with only the labels whose
 * keys keep lists (all when keep is NULL).  Comments and the profile-wide
 * fields come along.
 */
static int rebuild(const struct pprof *src, const size_t *depth, const int64_t *keep,
		   size_t nkeep, struct pprof **out)
{
	struct pprof_value_type *types = NULL;
	struct pprof_label *labels = NULL;
	uint64_t *locs = NULL;
	size_t labels_cap = 0, locs_cap = 0;
	struct copy c = {.src = src};
	int err = -ENOMEM;

	types = calloc(src->ntypes, sizeof(*types));
	c.mappings = calloc(src->nmappings + 1, sizeof(uint64_t));
	c.functions = calloc(src->nfunctions + 1, sizeof(uint64_t));
	c.locations = calloc(src->nlocations + 1, sizeof(uint64_t));
	if (!types || !c.mappings || !c.functions || !c.locations)
		goto cleanup;
	for (size_t i = 0; i < src->ntypes; i++)
		types[i] = (struct pprof_value_type){str(src, src->sample_types[i].type),
						     str(src, src->sample_types[i].unit)};
	c.dst = pprof__new(types, src->ntypes,
			   (struct pprof_value_type){str(src, src->period_type.type),
						     str(src, src->period_type.unit)},
			   src->period);
	if (!c.dst)
		goto cleanup;
	pprof__set_time(c.dst, src->time_nanos, src->duration_nanos);
	err = 0;
	if (src->default_sample_type > 0)
		err = pprof__set_default_sample_type(c.dst, str(src, src->default_sample_type));
	for (size_t i = 0; !err && i < src->ncomments; i++)
		err = pprof__add_comment(c.dst, str(src, src->comments[i]));

	for (size_t i = 0; !err && i < src->nsamples; i++) {
		const struct psample *s = &src->samples[i];
		size_t n = depth ? depth[i] : s->nlocs, nl = 0;
		/* Leaf first: the outermost n are the last n.  (No array at all
		 * when every stack is empty: NULL + 0 is undefined.) */
		const uint64_t *from = n ? src->sample_locs + s->loc_off + (s->nlocs - n) : NULL;

		err = array__grow(&locs, &locs_cap, n ?: 1, sizeof(*locs));
		err = err ?: array__grow(&labels, &labels_cap, s->nlabels ?: 1, sizeof(*labels));
		for (size_t j = 0; !err && j < n; j++)
			err = (locs[j] = copy_location(&c, from[j])) ? 0 : -ENOMEM;
		for (size_t j = 0; !err && j < s->nlabels; j++) {
			const struct plabel *l = &src->labels[s->label_off + j];

			if (keep && !kept_key(keep, nkeep, l->key))
				continue;
			labels[nl++] = (struct pprof_label){
				.key = str(src, l->key), .str = l->is_str ? str(src, l->str) : NULL,
				.num = l->num, .num_unit = l->num_unit ? str(src, l->num_unit) : NULL};
		}
		err = err ?: pprof__add_sample(c.dst, locs, n, src->values + i * src->ntypes,
					       labels, nl);
	}
	if (!err) {
		*out = c.dst;
		c.dst = NULL;
	}
cleanup:
	pprof__free(c.dst);
	free(types);
	free(c.mappings);
	free(c.functions);
	free(c.locations);
	free(c.lines);
	free(locs);
	free(labels);
	return err;
}

/* ---- step 2: the call tree, and where to cut it ------------------------ */

/*
 * Every sample's stack as a path from a root (one per label set) down a
 * tree of locations.  Nodes are appended parent first, so a walk in array
 * order sees a node's parent before the node.
 */
struct tnode {
	uint32_t parent;	/* NO_PARENT: a root */
	uint32_t depth;		/* locations from the root: 0 for a root */
	uint64_t key;		/* a location id; a root's: its label set's first sample */
	int64_t cum;		/* weight of the samples through it */
};

struct tree {
	const struct pprof *p;
	struct tnode *v;
	size_t n, cap;
	struct htab index;	/* (parent, key) -> node */
	struct htab sets;	/* label set -> its first sample */
	uint32_t *leaf;		/* sample -> its node */
	uint32_t *target;	/* node -> the node its samples go to at a threshold */
	uint32_t *seen;		/* node -> the last count() that met it */
	uint32_t epoch;
};

static uint32_t node_hash(uint32_t parent, uint64_t key)
{
	return hash__final(hash__u64(hash__u64(HASH_SEED, parent), key));
}

static bool node_eq(const void *ctx, size_t pos, const void *key)
{
	const struct tnode *a = &((const struct tree *)ctx)->v[pos], *b = key;

	return a->parent == b->parent && a->key == b->key;
}

static uint32_t set_hash(const struct pprof *p, const struct psample *s)
{
	uint64_t h = HASH_SEED;

	for (size_t i = 0; i < s->nlabels; i++) {
		const struct plabel *l = &p->labels[s->label_off + i];

		h = hash__u64(h, (uint64_t)l->key);
		h = hash__u64(h, (uint64_t)l->str);
		h = hash__u64(h, (uint64_t)l->num);
	}
	return hash__final(h);
}

/* Labels are sorted and interned by the builder, so equal sets are equal arrays. */
static bool set_eq(const void *ctx, size_t pos, const void *key)
{
	const struct pprof *p = ctx;
	const struct psample *a = &p->samples[pos], *b = key;

	for (size_t i = 0; a->nlabels == b->nlabels && i < a->nlabels; i++) {
		const struct plabel *x = &p->labels[a->label_off + i], *y = &p->labels[b->label_off + i];

		if (x->key != y->key || x->is_str != y->is_str || x->str != y->str ||
		    x->num != y->num || x->num_unit != y->num_unit)
			return false;
	}
	return a->nlabels == b->nlabels;
}

/* The node (parent, key), added with weight w. */
static int tree_add(struct tree *t, uint32_t parent, uint64_t key, int64_t w, uint32_t *out)
{
	struct tnode k = {.parent = parent, .key = key};
	uint32_t h = node_hash(parent, key);
	struct htab_slot *slot;
	long pos;
	int err;

	err = htab__reserve(&t->index);
	if (err)
		return err;
	pos = htab__find(&t->index, h, node_eq, t, &k, &slot);
	if (pos < 0) {
		if (t->n >= NO_PARENT)
			return -E2BIG;
		err = array__grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v));
		if (err)
			return err;
		k.depth = parent == NO_PARENT ? 0 : t->v[parent].depth + 1;
		t->v[t->n] = k;
		htab__set(&t->index, slot, h, t->n);
		pos = (long)t->n++;
	}
	t->v[pos].cum += w;
	*out = (uint32_t)pos;
	return 0;
}

static int tree_build(struct tree *t, size_t widx)
{
	const struct pprof *p = t->p;
	int err;

	t->leaf = calloc(p->nsamples + 1, sizeof(*t->leaf));
	if (!t->leaf)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct psample *s = &p->samples[i];
		int64_t w = p->values[i * p->ntypes + widx];
		uint32_t h = set_hash(p, s), node;
		struct htab_slot *slot;
		long set;

		w = w > 0 ? w : 0;
		err = htab__reserve(&t->sets);
		if (err)
			return err;
		set = htab__find(&t->sets, h, set_eq, p, s, &slot);
		if (set < 0) {
			htab__set(&t->sets, slot, h, i);
			set = (long)i;
		}
		err = tree_add(t, NO_PARENT, (uint64_t)set, w, &node);
		/* Root first: the last location is the outermost. */
		for (size_t j = s->nlocs; !err && j > 0; j--)
			err = tree_add(t, node, p->sample_locs[s->loc_off + j - 1], w, &node);
		if (err)
			return err;
		t->leaf[i] = node;
	}
	t->target = calloc(t->n + 1, sizeof(*t->target));
	t->seen = calloc(t->n + 1, sizeof(*t->seen));
	return t->target && t->seen ? 0 : -ENOMEM;
}

/* Samples the profile would have with every node lighter than min cut. */
static size_t tree_count(struct tree *t, int64_t min)
{
	size_t count = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct tnode *nd = &t->v[i];

		t->target[i] = nd->parent == NO_PARENT || nd->cum >= min ? (uint32_t)i :
										t->target[nd->parent];
	}
	t->epoch++;
	for (size_t i = 0; i < t->p->nsamples; i++) {
		uint32_t to = t->target[t->leaf[i]];

		if (t->seen[to] != t->epoch) {
			t->seen[to] = t->epoch;
			count++;
		}
	}
	return count;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The lowest weight, of the distinct weights in ws[0..n) and one past the
 * heaviest, at which at most goal samples remain.
 */
static int64_t lowest_fitting(struct tree *t, const int64_t *ws, size_t n, size_t goal)
{
	size_t lo = 0, hi = n;	/* hi: the sentinel, everything cut */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tree_count(t, ws[mid]) <= goal)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < n ? ws[lo] : ws[n - 1] + 1;
}

static void tree_free(struct tree *t)
{
	free(t->v);
	htab__free(&t->index);
	htab__free(&t->sets);
	free(t->leaf);
	free(t->target);
	free(t->seen);
}

/* ---- the whole ---------------------------------------------------------- */

static bool fits(const struct pprof_limits *lim, size_t samples, size_t bytes)
{
	return (!lim->max_samples || samples <= lim->max_samples) &&
	       (!lim->max_bytes || bytes <= lim->max_bytes);
}

/* The sample type step 2 weighs by: the default, else the first. */
static size_t weight_index(const struct pprof *p)
{
	for (size_t i = 0; p->default_sample_type > 0 && i < p->ntypes; i++)
		if (p->sample_types[i].type == p->default_sample_type)
			return i;
	return 0;
}

/* Step 2 on *pp (already through step 1): fold until it fits. */
static int fold(struct pprof **pp, const struct pprof_limits *lim, size_t *bytes, int64_t *below)
{
	struct pprof *p = *pp, *q = NULL;
	struct tree t = {.p = p};
	int64_t *ws = NULL, min;
	size_t *depth = NULL, nws = 0, goal;
	int err;

	err = tree_build(&t, weight_index(p));
	if (err)
		goto cleanup;
	ws = malloc((t.n + 1) * sizeof(*ws));
	depth = malloc((p->nsamples + 1) * sizeof(*depth));
	if (!ws || !depth) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < t.n; i++)
		if (t.v[i].parent != NO_PARENT)
			ws[nws++] = t.v[i].cum;
	qsort(ws, nws, sizeof(*ws), cmp_i64);
	/* Unique weights, ascending; a tree of roots alone has none. */
	{
		size_t n = 0;

		for (size_t i = 0; i < nws; i++)
			if (!n || ws[i] != ws[n - 1])
				ws[n++] = ws[i];
		nws = n;
		if (!nws)
			ws[nws++] = 0;
	}

	goal = lim->max_samples ? lim->max_samples : p->nsamples;
	for (int round = 0; round < MAX_SIZE_ROUNDS; round++) {
		size_t count;

		min = lowest_fitting(&t, ws, nws, goal);
		count = tree_count(&t, min);
		for (size_t i = 0; i < p->nsamples; i++)
			depth[i] = t.v[t.target[t.leaf[i]]].depth;
		pprof__free(q);
		q = NULL;
		err = rebuild(p, depth, NULL, 0, &q);
		err = err ?: pprof__encoded_size(q, bytes);
		if (err)
			goto cleanup;
		*below = min;
		/* Past the heaviest node everything is cut already: roots only. */
		if (fits(lim, q->nsamples, *bytes) || count <= 1 || min > ws[nws - 1])
			break;
		/* Over the size: ask for fewer samples, in proportion, less 10%. */
		goal = (size_t)((double)count * lim->max_bytes / *bytes * 0.9);
		if (goal >= count)
			goal = count - 1;
	}
	pprof__free(p);
	*pp = q;
	q = NULL;
cleanup:
	pprof__free(q);
	tree_free(&t);
	free(ws);
	free(depth);
	return err;
}

int pprof__coarsen(struct pprof **pp, const struct pprof_limits *lim, const char *const *keep,
		   struct pprof_coarsen_result *res)
{
	struct pprof_coarsen_result dummy;
	struct pprof *p, *q = NULL;
	struct pprof_limits work;
	int64_t keys[16];
	size_t nkeep = 0, bytes;
	char comment[COMMENT_ROOM - 64];
	int err, n;

	if (!pp || !*pp || !lim)
		return -EINVAL;
	p = *pp;
	res = res ?: &dummy;
	memset(res, 0, sizeof(*res));
	res->samples_before = p->nsamples;
	err = pprof__encoded_size(p, &bytes);
	if (err)
		return err;
	res->bytes_before = bytes;
	res->samples_after = p->nsamples;
	res->bytes_after = bytes;
	if (fits(lim, p->nsamples, bytes))
		return 0;

	/* Room for the comments added below, so that they cannot push it over. */
	work = *lim;
	if (work.max_bytes > 2 * COMMENT_ROOM)
		work.max_bytes -= COMMENT_ROOM;

	/* Step 1: the labels beyond keep go. */
	for (size_t i = 0; keep && keep[i] && nkeep < sizeof(keys) / sizeof(keys[0]); i++)
		keys[nkeep++] = pprof__str_lookup(p, keep[i]);
	err = rebuild(p, NULL, keys, nkeep, &q);
	err = err ?: pprof__encoded_size(q, &bytes);
	if (err)
		goto cleanup;
	res->labels_merged = true;
	/* Step 2: rare stacks fold into their callers. */
	if (!fits(&work, q->nsamples, bytes)) {
		err = fold(&q, &work, &bytes, &res->fold_below);
		if (err)
			goto cleanup;
	}
	/* Step 3, for more label sets than samples allowed: no labels at all. */
	if (!fits(&work, q->nsamples, bytes)) {
		struct pprof *all = q;

		q = NULL;
		err = rebuild(all, NULL, keys, 0, &q);
		pprof__free(all);
		err = err ?: pprof__encoded_size(q, &bytes);
		if (!err && !fits(&work, q->nsamples, bytes))
			err = fold(&q, &work, &bytes, &res->fold_below);
		if (err)
			goto cleanup;
		res->labels_dropped = true;
	}

	res->coarsened = true;
	res->samples_after = q->nsamples;
	n = snprintf(comment, sizeof(comment),
		     "profd: coarsened to fit max_samples=%zu max_bytes=%zu (a receiver such as "
		     "Pyroscope refuses a whole profile past its limits): %zu samples of %zu "
		     "bytes became %zu; samples merged across %s",
		     lim->max_samples, lim->max_bytes, res->samples_before, res->bytes_before,
		     res->samples_after,
		     res->labels_dropped ? "all labels" : "labels other than the defaults");
	if (res->fold_below && n > 0 && (size_t)n < sizeof(comment))
		snprintf(comment + n, sizeof(comment) - n,
			 ", then every frame whose stacks weigh under %" PRId64 " %s folded into "
			 "its caller", res->fold_below, str(q, q->sample_types[weight_index(q)].type));
	err = pprof__add_comment(q, comment);
	/* The size the client gets, the comment included. */
	err = err ?: pprof__encoded_size(q, &res->bytes_after);
	if (err)
		goto cleanup;
	pprof__free(p);
	*pp = q;
	q = NULL;
cleanup:
	pprof__free(q);
	return err;
}
