// SPDX-License-Identifier: BSD-2-Clause
/* pprof builder: interns strings, mappings, functions and locations, and
 * merges samples with equal stacks and labels (see pprof_int.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/htab.h"
#include "pprof/pprof.h"
#include "pprof/pprof_int.h"
#include "pprof/utf8.h"

/* ---- strings ----------------------------------------------------------- */

struct str_key {
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, size_t idx, const void *key)
{
	const struct pstr *e = &((const struct pprof *)ctx)->strs[idx];
	const struct str_key *k = key;

	return e->len == k->len && !memcmp(e->s, k->s, k->len);
}

static uint32_t str_hash(const char *s, size_t len)
{
	return hash__final(hash__bytes(HASH_SEED, s, len));
}

/*
 * Every string of a profile comes through here, escaped to valid, printable
 * UTF-8 first (pprof/utf8.h), so no field can carry bytes Pyroscope or a
 * protobuf decoder would refuse; the folded and SVG renderings read the
 * same table, so they show the same names.
 */
static int64_t str_intern(struct pprof *p, const char *s)
{
	struct str_key k = {s ? s : "", s ? strlen(s) : 0};
	size_t elen = utf8__escaped_len(k.s, k.len);
	char *escaped = NULL, *copy;
	struct htab_slot *slot;
	int64_t ret;
	uint32_t h;
	long pos;

	if (elen != k.len) {
		escaped = malloc(elen + 1);
		if (!escaped)
			return -ENOMEM;
		utf8__escape(k.s, k.len, escaped);
		k.s = escaped;
		k.len = elen;
	}
	h = str_hash(k.s, k.len);
	ret = htab__reserve(&p->strs_index);
	if (ret)
		goto cleanup;
	pos = htab__find(&p->strs_index, h, str_eq, p, &k, &slot);
	if (pos >= 0) {
		ret = pos;
		goto cleanup;
	}
	ret = array__grow(&p->strs, &p->strs_cap, p->nstrs + 1, sizeof(*p->strs));
	if (ret)
		goto cleanup;
	copy = escaped ?: malloc(k.len + 1);
	if (!copy) {
		ret = -ENOMEM;
		goto cleanup;
	}
	if (!escaped)
		memcpy(copy, k.s, k.len + 1);
	escaped = NULL;		/* kept */
	p->strs[p->nstrs].s = copy;
	p->strs[p->nstrs].len = k.len;
	htab__set(&p->strs_index, slot, h, p->nstrs);
	ret = (int64_t)p->nstrs++;
cleanup:
	free(escaped);
	return ret;
}

/* Index of s without adding it; -1 when the profile never saw s.  Looked
 * up escaped, as str_intern() keeps it. */
int64_t pprof__str_lookup(const struct pprof *p, const char *s)
{
	struct str_key k = {s, strlen(s)};
	size_t elen = utf8__escaped_len(k.s, k.len);
	char *escaped = NULL;
	int64_t pos;

	if (elen != k.len) {
		escaped = malloc(elen + 1);
		if (!escaped)
			return -1;
		utf8__escape(k.s, k.len, escaped);
		k.s = escaped;
		k.len = elen;
	}
	pos = htab__find(&p->strs_index, str_hash(k.s, k.len), str_eq, p, &k, NULL);
	free(escaped);
	return pos;
}

int64_t pprof__string(struct pprof *p, const char *s)
{
	if (!p)
		return -EINVAL;
	return str_intern(p, s);
}

static int vt_intern(struct pprof *p, const struct pprof_value_type *in, struct pvt *out)
{
	out->type = str_intern(p, in->type);
	if (out->type < 0)
		return (int)out->type;
	out->unit = str_intern(p, in->unit);
	if (out->unit < 0)
		return (int)out->unit;
	return 0;
}

/* ---- lifetime and profile-wide fields ---------------------------------- */

void pprof__free(struct pprof *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nstrs; i++)
		free(p->strs[i].s);
	free(p->strs);
	htab__free(&p->strs_index);
	free(p->mappings);
	htab__free(&p->mappings_index);
	free(p->functions);
	htab__free(&p->functions_index);
	free(p->locations);
	htab__free(&p->locations_index);
	free(p->lines);
	free(p->samples);
	htab__free(&p->samples_index);
	free(p->sample_locs);
	free(p->labels);
	free(p->values);
	free(p->comments);
	free(p->sample_types);
	free(p);
}

struct pprof *pprof__new(const struct pprof_value_type *sample_types, size_t n,
			 struct pprof_value_type period_type, int64_t period)
{
	struct pprof *p;
	size_t i;
	int err;

	if (!sample_types || !n) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->sample_types = calloc(n, sizeof(*p->sample_types));
	if (!p->sample_types) {
		err = -ENOMEM;
		goto err_free;
	}
	p->ntypes = n;
	p->period = period;

	/* profile.proto requires string_table[0] == "". */
	err = (int)str_intern(p, "");
	if (err < 0)
		goto err_free;
	for (i = 0; i < n; i++) {
		err = vt_intern(p, &sample_types[i], &p->sample_types[i]);
		if (err)
			goto err_free;
	}
	err = vt_intern(p, &period_type, &p->period_type);
	if (err)
		goto err_free;
	return p;

err_free:
	pprof__free(p);
	errno = -err;
	return NULL;
}

void pprof__set_time(struct pprof *p, int64_t time_nanos, int64_t duration_nanos)
{
	if (!p)
		return;
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

/* Only a declared sample type can be the default; pprof would silently
 * ignore any other name, so reject it where the mistake is made. */
int pprof__set_default_sample_type(struct pprof *p, const char *type)
{
	int64_t idx;
	size_t i;

	if (!p || !type)
		return -EINVAL;
	idx = pprof__str_lookup(p, type);
	for (i = 0; idx > 0 && i < p->ntypes; i++) {
		if (p->sample_types[i].type == idx) {
			p->default_sample_type = idx;
			return 0;
		}
	}
	return -EINVAL;
}

int pprof__add_comment(struct pprof *p, const char *comment)
{
	int64_t idx;
	int err;

	if (!p || !comment)
		return -EINVAL;
	idx = str_intern(p, comment);
	if (idx < 0)
		return (int)idx;
	err = array__grow(&p->comments, &p->comments_cap, p->ncomments + 1, sizeof(*p->comments));
	if (err)
		return err;
	p->comments[p->ncomments++] = idx;
	return 0;
}

/* ---- mappings ---------------------------------------------------------- */

static bool mapping_eq(const void *ctx, size_t idx, const void *key)
{
	const struct pmapping *a = &((const struct pprof *)ctx)->mappings[idx];
	const struct pmapping *b = key;

	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       a->file == b->file && a->build_id == b->build_id &&
	       a->has_functions == b->has_functions && a->has_filenames == b->has_filenames &&
	       a->has_line_numbers == b->has_line_numbers &&
	       a->has_inline_frames == b->has_inline_frames;
}

static uint32_t mapping_hash(const struct pmapping *m)
{
	uint64_t h = HASH_SEED;
	unsigned int flags = m->has_functions | m->has_filenames << 1 | m->has_line_numbers << 2 |
			     m->has_inline_frames << 3;

	h = hash__u64(h, m->start);
	h = hash__u64(h, m->limit);
	h = hash__u64(h, m->offset);
	h = hash__u64(h, (uint64_t)m->file);
	h = hash__u64(h, (uint64_t)m->build_id);
	h = hash__u64(h, flags);
	return hash__final(h);
}

uint64_t pprof__mapping(struct pprof *p, const struct pprof_mapping *m)
{
	struct pmapping k = {0};
	struct htab_slot *slot;
	long pos;
	uint32_t h;

	if (!p || !m)
		return 0;
	k.start = m->start;
	k.limit = m->limit;
	k.offset = m->offset;
	k.file = str_intern(p, m->file);
	k.build_id = str_intern(p, m->build_id);
	if (k.file < 0 || k.build_id < 0)
		return 0;
	k.has_functions = m->has_functions;
	k.has_filenames = m->has_filenames;
	k.has_line_numbers = m->has_line_numbers;
	k.has_inline_frames = m->has_inline_frames;

	h = mapping_hash(&k);
	if (htab__reserve(&p->mappings_index))
		return 0;
	pos = htab__find(&p->mappings_index, h, mapping_eq, p, &k, &slot);
	if (pos >= 0)
		return pos + 1;
	if (array__grow(&p->mappings, &p->mappings_cap, p->nmappings + 1, sizeof(*p->mappings)))
		return 0;
	p->mappings[p->nmappings] = k;
	htab__set(&p->mappings_index, slot, h, p->nmappings);
	return ++p->nmappings;
}

/* ---- functions --------------------------------------------------------- */

static bool function_eq(const void *ctx, size_t idx, const void *key)
{
	const struct pfunction *a = &((const struct pprof *)ctx)->functions[idx];
	const struct pfunction *b = key;

	return a->name == b->name && a->system_name == b->system_name &&
	       a->filename == b->filename && a->start_line == b->start_line;
}

static uint32_t function_hash(const struct pfunction *f)
{
	uint64_t h = HASH_SEED;

	h = hash__u64(h, (uint64_t)f->name);
	h = hash__u64(h, (uint64_t)f->system_name);
	h = hash__u64(h, (uint64_t)f->filename);
	h = hash__u64(h, (uint64_t)f->start_line);
	return hash__final(h);
}

uint64_t pprof__function(struct pprof *p, const char *name, const char *system_name,
			 const char *filename, int64_t start_line)
{
	struct pfunction k;
	struct htab_slot *slot;
	long pos;
	uint32_t h;

	if (!p)
		return 0;
	k.name = str_intern(p, name);
	k.system_name = str_intern(p, system_name);
	k.filename = str_intern(p, filename);
	k.start_line = start_line;
	if (k.name < 0 || k.system_name < 0 || k.filename < 0)
		return 0;

	h = function_hash(&k);
	if (htab__reserve(&p->functions_index))
		return 0;
	pos = htab__find(&p->functions_index, h, function_eq, p, &k, &slot);
	if (pos >= 0)
		return pos + 1;
	if (array__grow(&p->functions, &p->functions_cap, p->nfunctions + 1, sizeof(*p->functions)))
		return 0;
	p->functions[p->nfunctions] = k;
	htab__set(&p->functions_index, slot, h, p->nfunctions);
	return ++p->nfunctions;
}

/* ---- locations --------------------------------------------------------- */

/* A location being looked up; its lines are still the caller's. */
struct location_key {
	uint64_t mapping_id;
	uint64_t address;
	const struct pprof_line *lines;
	size_t nlines;
};

static bool location_eq(const void *ctx, size_t idx, const void *key)
{
	const struct pprof *p = ctx;
	const struct plocation *a = &p->locations[idx];
	const struct location_key *b = key;
	const struct pprof_line *al;
	size_t i;

	if (a->mapping_id != b->mapping_id || a->address != b->address)
		return false;
	if (b->address)
		return true;
	if (a->nlines != b->nlines)
		return false;
	for (i = 0; i < a->nlines; i++) {
		al = &p->lines[a->line_off + i];
		if (al->function_id != b->lines[i].function_id || al->line != b->lines[i].line)
			return false;
	}
	return true;
}

static uint32_t location_hash(const struct location_key *k)
{
	uint64_t h = HASH_SEED;
	size_t i;

	h = hash__u64(h, k->mapping_id);
	h = hash__u64(h, k->address);
	if (!k->address) {
		for (i = 0; i < k->nlines; i++) {
			h = hash__u64(h, k->lines[i].function_id);
			h = hash__u64(h, (uint64_t)k->lines[i].line);
		}
	}
	return hash__final(h);
}

uint64_t pprof__location(struct pprof *p, uint64_t mapping_id, uint64_t address,
			 const struct pprof_line *lines, size_t nlines)
{
	struct location_key k = {mapping_id, address, lines, nlines};
	struct plocation *loc;
	struct htab_slot *slot;
	long pos;
	uint32_t h;
	size_t i;

	if (!p || mapping_id > p->nmappings || (nlines && !lines))
		return 0;
	for (i = 0; i < nlines; i++) {
		if (!lines[i].function_id || lines[i].function_id > p->nfunctions)
			return 0;
	}

	h = location_hash(&k);
	if (htab__reserve(&p->locations_index))
		return 0;
	pos = htab__find(&p->locations_index, h, location_eq, p, &k, &slot);
	if (pos >= 0)
		return pos + 1;
	if (array__grow(&p->locations, &p->locations_cap, p->nlocations + 1, sizeof(*p->locations)))
		return 0;
	if (array__grow(&p->lines, &p->lines_cap, p->nlines + nlines, sizeof(*p->lines)))
		return 0;
	loc = &p->locations[p->nlocations];
	loc->mapping_id = mapping_id;
	loc->address = address;
	loc->line_off = p->nlines;
	loc->nlines = nlines;
	if (nlines)
		memcpy(p->lines + p->nlines, lines, nlines * sizeof(*lines));
	p->nlines += nlines;
	htab__set(&p->locations_index, slot, h, p->nlocations);
	return ++p->nlocations;
}

/* ---- samples ----------------------------------------------------------- */

/* A sample being looked up: caller's locations, labels already interned. */
struct sample_key {
	const uint64_t *locs;
	size_t nlocs;
	const struct plabel *labels;
	size_t nlabels;
};

static bool label_eq(const struct plabel *a, const struct plabel *b)
{
	return a->key == b->key && a->is_str == b->is_str && a->str == b->str && a->num == b->num &&
	       a->num_unit == b->num_unit;
}

/* A total order on labels, so that samples merge whatever order the
 * caller listed their labels in. */
static bool label_less(const struct plabel *a, const struct plabel *b)
{
	if (a->key != b->key)
		return a->key < b->key;
	if (a->is_str != b->is_str)
		return a->is_str < b->is_str;
	if (a->str != b->str)
		return a->str < b->str;
	if (a->num != b->num)
		return a->num < b->num;
	return a->num_unit < b->num_unit;
}

/* Insertion sort: samples carry a handful of labels. */
static void labels_sort(struct plabel *l, size_t n)
{
	struct plabel tmp;
	size_t i, j;

	for (i = 1; i < n; i++) {
		tmp = l[i];
		for (j = i; j > 0 && label_less(&tmp, &l[j - 1]); j--)
			l[j] = l[j - 1];
		l[j] = tmp;
	}
}

static bool sample_eq(const void *ctx, size_t idx, const void *key)
{
	const struct pprof *p = ctx;
	const struct psample *a = &p->samples[idx];
	const struct sample_key *b = key;
	size_t i;

	if (a->nlocs != b->nlocs || a->nlabels != b->nlabels)
		return false;
	if (a->nlocs && memcmp(p->sample_locs + a->loc_off, b->locs, a->nlocs * sizeof(*b->locs)))
		return false;
	for (i = 0; i < a->nlabels; i++) {
		if (!label_eq(&p->labels[a->label_off + i], &b->labels[i]))
			return false;
	}
	return true;
}

static uint32_t sample_hash(const struct sample_key *k)
{
	uint64_t h = HASH_SEED;
	size_t i;

	for (i = 0; i < k->nlocs; i++)
		h = hash__u64(h, k->locs[i]);
	for (i = 0; i < k->nlabels; i++) {
		h = hash__u64(h, (uint64_t)k->labels[i].key);
		h = hash__u64(h, (uint64_t)k->labels[i].str);
		h = hash__u64(h, (uint64_t)k->labels[i].num);
	}
	return hash__final(h);
}

static int label_intern(struct pprof *p, const struct pprof_label *in, struct plabel *out)
{
	memset(out, 0, sizeof(*out));
	if (!in->key)
		return -EINVAL;
	out->key = str_intern(p, in->key);
	if (out->key < 0)
		return (int)out->key;
	if (in->str) {
		out->is_str = true;
		out->str = str_intern(p, in->str);
		return out->str < 0 ? (int)out->str : 0;
	}
	out->num = in->num;
	out->num_unit = str_intern(p, in->num_unit);
	return out->num_unit < 0 ? (int)out->num_unit : 0;
}

/* See pprof_int.h. */
void pprof__values_add(int64_t *dst, const int64_t *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = (int64_t)((uint64_t)dst[i] + (uint64_t)src[i]);
}

int pprof__add_sample(struct pprof *p, const uint64_t *location_ids, size_t nlocs,
		      const int64_t *values, const struct pprof_label *labels, size_t nlabels)
{
	struct sample_key k = {location_ids, nlocs, NULL, nlabels};
	struct plabel *staged;
	struct htab_slot *slot;
	long pos;
	struct psample *s;
	uint32_t h;
	size_t i;
	int err;

	if (!p || !values || (nlocs && !location_ids) || (nlabels && !labels))
		return -EINVAL;
	for (i = 0; i < nlocs; i++) {
		if (!location_ids[i] || location_ids[i] > p->nlocations)
			return -EINVAL;
	}

	/* Labels are staged past the end of p->labels and only kept (by
	 * bumping p->nlabels) if the sample turns out to be new. */
	err = array__grow(&p->labels, &p->labels_cap, p->nlabels + nlabels, sizeof(*p->labels));
	if (err)
		return err;
	staged = nlabels ? p->labels + p->nlabels : NULL;
	for (i = 0; i < nlabels; i++) {
		err = label_intern(p, &labels[i], &staged[i]);
		if (err)
			return err;
	}
	labels_sort(staged, nlabels);
	k.labels = staged;

	h = sample_hash(&k);
	err = htab__reserve(&p->samples_index);
	if (err)
		return err;
	pos = htab__find(&p->samples_index, h, sample_eq, p, &k, &slot);
	if (pos >= 0) {
		pprof__values_add(p->values + pos * p->ntypes, values, p->ntypes);
		return 0;
	}

	if (array__grow(&p->samples, &p->samples_cap, p->nsamples + 1, sizeof(*p->samples)) ||
	    array__grow(&p->sample_locs, &p->sample_locs_cap, p->nsample_locs + nlocs,
		 sizeof(*p->sample_locs)) ||
	    array__grow(&p->values, &p->values_cap, (p->nsamples + 1) * p->ntypes, sizeof(*p->values)))
		return -ENOMEM;
	s = &p->samples[p->nsamples];
	s->loc_off = p->nsample_locs;
	s->nlocs = nlocs;
	s->label_off = p->nlabels;
	s->nlabels = nlabels;
	if (nlocs)
		memcpy(p->sample_locs + p->nsample_locs, location_ids,
		       nlocs * sizeof(*location_ids));
	p->nsample_locs += nlocs;
	p->nlabels += nlabels;
	memcpy(p->values + p->nsamples * p->ntypes, values, p->ntypes * sizeof(*values));
	htab__set(&p->samples_index, slot, h, p->nsamples);
	p->nsamples++;
	return 0;
}

size_t pprof__sample_count(const struct pprof *p)
{
	return p ? p->nsamples : 0;
}
