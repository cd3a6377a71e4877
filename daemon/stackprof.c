// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stackprof.h"
#include "pprof.h"
#include "procs.h"
#include "symbolizer.h"

#define KERNEL_MAPPING_NAME "[kernel.kallsyms]"
#define MAX_LOCS (2 * 128)	/* kernel + user frames, one spliced leaf caller */

/*
 * (key1, key2) -> value, open addressing.  Used to resolve every distinct
 * frame and mapping once per profile, however many stacks share it.
 */
struct memo_slot {
	const void *k1;
	uint64_t k2;
	uint64_t val;
	bool used;
};

struct memo {
	struct memo_slot *s;
	size_t cap;
	size_t n;
};

static uint64_t memo_hash(const void *k1, uint64_t k2)
{
	uint64_t h = (uintptr_t)k1 * 0x9e3779b97f4a7c15ull ^ k2 * 0xc2b2ae3d27d4eb4full;

	return h ^ (h >> 29);
}

static struct memo_slot *memo_find(struct memo *m, const void *k1, uint64_t k2)
{
	size_t i = memo_hash(k1, k2) & (m->cap - 1);

	while (m->s[i].used && (m->s[i].k1 != k1 || m->s[i].k2 != k2))
		i = (i + 1) & (m->cap - 1);
	return &m->s[i];
}

static int memo_grow(struct memo *m)
{
	struct memo_slot *old = m->s;
	size_t oldcap = m->cap;

	m->cap = oldcap ? oldcap * 2 : 4096;
	m->s = calloc(m->cap, sizeof(*m->s));
	if (!m->s) {
		m->s = old;
		m->cap = oldcap;
		return -ENOMEM;
	}
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].used)
			*memo_find(m, old[i].k1, old[i].k2) = old[i];
	free(old);
	return 0;
}

/* Returns the slot for (k1, k2); slot->used tells whether it was there. */
static struct memo_slot *memo_get(struct memo *m, const void *k1, uint64_t k2)
{
	struct memo_slot *slot;

	if ((m->n + 1) * 2 > m->cap && memo_grow(m))
		return NULL;
	slot = memo_find(m, k1, k2);
	if (!slot->used) {
		slot->k1 = k1;
		slot->k2 = k2;
		m->n++;
	}
	return slot;
}

struct build {
	struct symbolizer *sym;
	struct procs *procs;
	struct pprof *p;
	struct stackprof_result *res;
	uint64_t kernel_mapping;
	struct memo locs;	/* (proc_map* or &kernel_key, address) -> location id */
	struct memo mappings;	/* (proc_map*, 0) -> pprof mapping id (0: unusable) */
};

static const char kernel_key;

static uint64_t lines_location(struct build *b, uint64_t mapping, uint64_t addr,
			       const struct sym_result *r)
{
	struct pprof_line lines[SYM_MAX_FRAMES];
	int n = 0;

	for (int i = 0; i < r->nframes; i++) {
		const struct sym_frame *f = &r->frames[i];
		uint64_t fn;

		if (!f->function)
			continue;
		fn = pprof__function(b->p, f->function, f->function, f->file, 0);
		if (!fn)
			return 0;
		lines[n].function_id = fn;
		lines[n].line = f->line;
		n++;
	}
	return pprof__location(b->p, mapping, addr, lines, n);
}

static uint64_t kernel_location(struct build *b, uint64_t addr)
{
	struct memo_slot *slot = memo_get(&b->locs, &kernel_key, addr);
	struct sym_result r = {};

	if (!slot)
		return 0;
	if (slot->used)
		return slot->val;
	if (!b->kernel_mapping) {
		struct pprof_mapping km = {.file = KERNEL_MAPPING_NAME, .has_functions = true};

		/* Without kallsyms (no privilege) the mapping still names the frames' origin. */
		symbolizer__kernel_range(b->sym, &km.start, &km.limit);
		b->kernel_mapping = pprof__mapping(b->p, &km);
	}
	symbolizer__resolve_kernel(b->sym, addr, &r);
	slot->val = lines_location(b, b->kernel_mapping, addr, &r);
	slot->used = slot->val != 0;
	return slot->val;
}

static uint64_t mapping_id(struct build *b, const struct proc_map *m)
{
	struct memo_slot *slot = memo_get(&b->mappings, m, 0);
	struct sym_object_key key = {m->path, m->dev, m->ino};
	struct sym_object_info info = {};
	struct pprof_mapping pm = {
		.start = m->start, .limit = m->end, .offset = m->offset, .file = m->path,
	};

	if (!slot)
		return 0;
	if (slot->used)
		return slot->val;
	if (symbolizer__object_info(b->sym, &key, &info) == 0) {
		pm.build_id = info.build_id;
		pm.has_functions = info.has_functions;
		pm.has_filenames = info.has_filenames;
		pm.has_line_numbers = info.has_line_numbers;
		pm.has_inline_frames = info.has_inline_frames;
	}
	slot->val = pprof__mapping(b->p, &pm);
	slot->used = true;
	return slot->val;
}

/*
 * Frames above the leaf hold return addresses, which point after the call;
 * look up addr - 1 so the line is the call's, as perf and pprof do.
 */
static uint64_t user_location(struct build *b, const struct proc_maps *pm, uint64_t addr,
			      bool leaf, bool *symbolized)
{
	const struct proc_map *m = proc_maps__find(pm, addr);
	struct memo_slot *slot;
	struct sym_result r = {};
	uint64_t mid, lookup = leaf ? addr : addr - 1;

	*symbolized = false;
	if (!m)
		return pprof__location(b->p, 0, addr, NULL, 0);
	slot = memo_get(&b->locs, m, addr);
	if (!slot)
		return 0;
	if (slot->used) {
		*symbolized = slot->val >> 63;
		return slot->val & ~(1ull << 63);
	}
	mid = mapping_id(b, m);
	if (symbolizer__resolve(b->sym, &(struct sym_object_key){m->path, m->dev, m->ino},
				lookup - m->start + m->offset, &r) < 0)
		r.nframes = 0;
	*symbolized = r.nframes > 0 && r.frames[r.nframes - 1].function;
	slot->val = lines_location(b, mid, addr, &r);
	if (!slot->val)
		return 0;
	slot->used = true;
	/* The top bit remembers whether it was symbolized; ids never get that big. */
	slot->val |= (uint64_t)*symbolized << 63;
	return slot->val & ~(1ull << 63);
}

static int add_stack(const struct raw_stack *st, void *ctx)
{
	struct build *b = ctx;
	uint64_t locs[MAX_LOCS + 1];
	const struct proc_maps *pm = NULL;
	struct pprof_label labels[4];
	size_t n = 0, nl = 0;

	labels[nl++] = (struct pprof_label){.key = "pid", .num = st->pid};
	if (st->tid) {
		labels[nl++] = (struct pprof_label){.key = "tid", .num = st->tid};
		labels[nl++] = (struct pprof_label){.key = "thread_name", .str = st->comm};
	}
	labels[nl++] = (struct pprof_label){.key = "process_name", .str = st->pcomm};
	if (st->leaf_function) {
		struct pprof_line line = {pprof__function(b->p, st->leaf_function, st->leaf_function,
							  NULL, 0), 0};

		locs[n] = line.function_id ? pprof__location(b->p, 0, 0, &line, 1) : 0;
		if (!locs[n])
			return -ENOMEM;
		n++;
	}

	for (int i = 0; i < st->nk && n < MAX_LOCS; i++) {
		locs[n] = kernel_location(b, st->kframes[i]);
		if (!locs[n])
			return -ENOMEM;
		n++;
	}
	if (st->nu)
		pm = procs__get(b->procs, st->pid);
	for (int i = 0; i < st->nu && n < MAX_LOCS; i++) {
		bool ok;

		/*
		 * A frame-pointer walk through code built without frame
		 * pointers (most distribution libraries) yields words that
		 * are not return addresses: 0, small integers, pointers into
		 * data.  A caller's return address lies in executable text;
		 * where one does not, the chain is broken and the rest is
		 * noise, so the stack ends there.
		 */
		if (i > 0 && pm && !proc_maps__find(pm, st->uframes[i])) {
			b->res->truncated += st->values[0];
			break;
		}

		/* A synthetic leaf (the allocator) makes uframes[0] a return address. */
		locs[n] = user_location(b, pm, st->uframes[i], i == 0 && !st->leaf_function, &ok);
		if (!locs[n])
			return -ENOMEM;
		n++;
		b->res->user_frames += st->values[0];
		b->res->user_frames_symbolized += ok ? st->values[0] : 0;
	}
	b->res->samples += st->values[0];
	return pprof__add_sample(b->p, locs, n, st->values, labels, nl);
}

int stackprof__build(struct symbolizer *sym, struct procs *procs, const struct stackprof_meta *meta,
		     raw_stack_iter iter, void *src, struct pprof **out, struct stackprof_result *res)
{
	struct stackprof_result dummy;
	struct build b = {.sym = sym, .procs = procs, .res = res ? res : &dummy};
	char comment[160];
	int err = 0;

	if (meta->ntypes == 0 || meta->ntypes > STACKPROF_MAX_VALUES)
		return -EINVAL;
	memset(b.res, 0, sizeof(*b.res));
	b.p = pprof__new(meta->types, meta->ntypes,
			 (struct pprof_value_type){meta->period_type, meta->period_unit},
			 meta->period);
	if (!b.p)
		return -ENOMEM;
	pprof__set_time(b.p, meta->start_ns, meta->duration_ns);
	if (meta->default_type)
		err = pprof__set_default_sample_type(b.p, meta->default_type);
	for (size_t i = 0; !err && meta->comments && meta->comments[i]; i++)
		err = pprof__add_comment(b.p, meta->comments[i]);
	err = err ?: iter(src, add_stack, &b);
	snprintf(comment, sizeof(comment),
		 "profd: user stacks cut where the frame-pointer chain left executable code: "
		 "%" PRIu64 " samples", b.res->truncated);
	err = err ?: pprof__add_comment(b.p, comment);
	free(b.locs.s);
	free(b.mappings.s);
	if (err) {
		pprof__free(b.p);
		return err < 0 ? err : -EIO;
	}
	*out = b.p;
	return 0;
}
