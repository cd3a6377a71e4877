// SPDX-License-Identifier: BSD-2-Clause
/* Reading a built profile back: comments, sample types and every stack with
 * its frames expanded (inlined lines included), for the renderers. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/htab.h"
#include "pprof/pprof.h"
#include "pprof/pprof_int.h"

/* See pprof_int.h. */
int64_t pprof__sample_str_label(const struct pprof *p, const struct psample *s, int64_t key)
{
	const struct plabel *l;
	size_t i;

	for (i = 0; key > 0 && i < s->nlabels; i++) {
		l = &p->labels[s->label_off + i];
		if (l->key == key && l->is_str && l->str > 0)
			return l->str;
	}
	return -1;
}

const char *pprof__default_sample_type(const struct pprof *p)
{
	return p && p->default_sample_type > 0 ? p->strs[p->default_sample_type].s : NULL;
}

const char *pprof__comment(const struct pprof *p, size_t i)
{
	return p && i < p->ncomments ? p->strs[p->comments[i]].s : NULL;
}

int pprof__sample_type(const struct pprof *p, size_t i, struct pprof_value_type *out)
{
	if (!p || i >= p->ntypes || !out)
		return -EINVAL;
	out->type = p->strs[p->sample_types[i].type].s;
	out->unit = p->strs[p->sample_types[i].unit].s;
	return 0;
}

int64_t pprof__duration_nanos(const struct pprof *p)
{
	return p ? p->duration_nanos : 0;
}

/* The mapping the symbolizer puts kernel frames under, as perf names it. */
#define PPROF_KERNEL_MAPPING "[kernel.kallsyms]"

/* Room for "0x" + 16 hex digits + NUL: the name of a frame without one. */
#define PPROF_HEX_NAME 19

struct stack_walk {
	struct pprof_frame *frames;
	size_t cap;
	char (*hex)[PPROF_HEX_NAME];	/* hex[i] backs frames[i].name when needed */
	size_t hex_cap;
	bool *kernel;			/* by mapping index */
};

static int stack_walk_reserve(struct stack_walk *w, size_t need)
{
	int err = array__grow(&w->hex, &w->hex_cap, need, sizeof(*w->hex));

	return err ?: array__grow(&w->frames, &w->cap, need, sizeof(*w->frames));
}

static const char *frame_unknown_name(char *hex, uint64_t address)
{
	if (!address)
		return "[unknown]";
	snprintf(hex, PPROF_HEX_NAME, "0x%" PRIx64, address);
	return hex;
}

/* Fills w->frames with sample s, root first; returns the frame count. */
static size_t stack_walk_fill(struct stack_walk *w, const struct pprof *p,
			      const struct psample *s, int64_t root)
{
	const struct plocation *loc;
	const struct pprof_line *ln;
	const struct pstr *name;
	bool kernel;
	size_t i, j, n = 0;

	if (root > 0)
		w->frames[n++] = (struct pprof_frame){p->strs[root].s, PPROF_FRAME_ROOT};
	/* Locations are leaf first; a location's lines innermost first. */
	for (i = s->nlocs; i-- > 0;) {
		loc = &p->locations[p->sample_locs[s->loc_off + i] - 1];
		kernel = loc->mapping_id && w->kernel[loc->mapping_id - 1];
		if (!loc->nlines) {
			w->frames[n].name = frame_unknown_name(w->hex[n], loc->address);
			w->frames[n++].kind = kernel ? PPROF_FRAME_KERNEL : PPROF_FRAME_USER;
			continue;
		}
		for (j = loc->nlines; j-- > 0;) {
			ln = &p->lines[loc->line_off + j];
			name = &p->strs[p->functions[ln->function_id - 1].name];
			w->frames[n].name = name->len ? name->s
						      : frame_unknown_name(w->hex[n], loc->address);
			w->frames[n++].kind = j + 1 < loc->nlines ? PPROF_FRAME_INLINED
						  : kernel	   ? PPROF_FRAME_KERNEL
								   : PPROF_FRAME_USER;
		}
	}
	return n;
}

#define ROOT_KEYS_MAX 4

int pprof__for_each_stack(const struct pprof *p, size_t value_index, const char *root_label,
			  pprof_stack_fn fn, void *ctx)
{
	struct stack_walk w = {0};
	const struct psample *s;
	int64_t root_keys[ROOT_KEYS_MAX], root;
	size_t nroot = 0;
	size_t i, j, need;
	int err = 0;

	if (!p || value_index >= p->ntypes || !fn)
		return -EINVAL;
	/* "a|b": a's value, else b's. */
	for (const char *k = root_label; k && nroot < ROOT_KEYS_MAX; nroot++) {
		const char *bar = strchr(k, '|');
		char name[64];

		snprintf(name, sizeof(name), "%.*s", bar ? (int)(bar - k) : (int)strlen(k), k);
		root_keys[nroot] = pprof__str_lookup(p, name);
		k = bar ? bar + 1 : NULL;
	}
	w.kernel = calloc(p->nmappings + 1, sizeof(*w.kernel));
	if (!w.kernel)
		return -ENOMEM;
	for (i = 0; i < p->nmappings; i++)
		w.kernel[i] = !strcmp(p->strs[p->mappings[i].file].s, PPROF_KERNEL_MAPPING);
	for (i = 0; !err && i < p->nsamples; i++) {
		s = &p->samples[i];
		root = -1;
		for (j = 0; j < nroot && root < 0; j++)
			root = pprof__sample_str_label(p, s, root_keys[j]);
		need = 1;
		for (j = 0; j < s->nlocs; j++)
			need += p->locations[p->sample_locs[s->loc_off + j] - 1].nlines ?: 1;
		err = stack_walk_reserve(&w, need);
		if (!err)
			err = fn(w.frames, stack_walk_fill(&w, p, s, root),
				 p->values[i * p->ntypes + value_index], ctx);
	}
	free(w.frames);
	free(w.hex);
	free(w.kernel);
	return err;
}
