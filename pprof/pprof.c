// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof: the profile builder.  Every table (strings, mappings, functions,
 * locations, samples) is an append-only array whose index + 1 is the id the
 * entry gets in the encoded profile, plus an open-addressing hash index over
 * it for deduplication.  Nothing is ever removed, so ids stay stable.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pb.h"
#include "pprof.h"
#include "pprof_int.h"

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

/* ---- open-addressing hash index ---------------------------------------- */

struct htab_slot {
	uint32_t hash;
	uint32_t id; /* index of the entry + 1; 0 marks an empty slot */
};

/* Linear probing over a power-of-two array kept at most half full. */
struct htab {
	struct htab_slot *slots;
	size_t cap;
	size_t used;
};

/* Does entry idx of the table that ctx owns equal key? */
typedef bool (*htab_eq_fn)(const void *ctx, size_t idx, const void *key);

static void htab_free(struct htab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = 0;
	t->used = 0;
}

/* Guarantees room for one more entry, so htab_find() always ends. */
static int htab_reserve(struct htab *t)
{
	struct htab_slot *slots;
	size_t cap, i, j;

	/* Ids are stored in 32 bits. */
	if (t->used >= UINT32_MAX - 1)
		return -E2BIG;
	if ((t->used + 1) * 2 <= t->cap)
		return 0;
	cap = t->cap ? t->cap * 2 : 64;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		if (!t->slots[i].id)
			continue;
		for (j = t->slots[i].hash & (cap - 1); slots[j].id; j = (j + 1) & (cap - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

/* The slot holding key, or the empty slot where it would go. */
static struct htab_slot *htab_find(const struct htab *t, uint32_t hash, htab_eq_fn eq,
				   const void *ctx, const void *key)
{
	size_t i = hash & (t->cap - 1);
	struct htab_slot *s;

	for (;; i = (i + 1) & (t->cap - 1)) {
		s = &t->slots[i];
		if (!s->id || (s->hash == hash && eq(ctx, s->id - 1, key)))
			return s;
	}
}

static void htab_set(struct htab *t, struct htab_slot *s, uint32_t hash, size_t idx)
{
	s->hash = hash;
	s->id = (uint32_t)(idx + 1);
	t->used++;
}

#define HASH_SEED 0xcbf29ce484222325ULL
#define HASH_PRIME 0x100000001b3ULL

/* Multiplying by an odd constant is a bijection, so no input bits are lost
 * until hash_final() folds the high bits down into the 32 kept. */
static uint64_t hash_u64(uint64_t h, uint64_t v)
{
	return (h ^ v) * HASH_PRIME;
}

static uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *s = data;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ s[i]) * HASH_PRIME;
	return h;
}

/* murmur3's fmix64: linear probing needs well-mixed low bits. */
static uint32_t hash_final(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (uint32_t)h;
}

/* ---- growable arrays --------------------------------------------------- */

/* See pprof_int.h. */
int pprof__grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
	void *arr, *nar;
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	memcpy(&arr, arrp, sizeof(arr));
	nar = realloc(arr, ncap * elem);
	if (!nar)
		return -ENOMEM;
	memcpy(arrp, &nar, sizeof(nar));
	*cap = ncap;
	return 0;
}

/* ---- the builder ------------------------------------------------------- */

struct pstr {
	char *s;
	size_t len;
};

struct pvt {
	int64_t type;
	int64_t unit;
};

struct pmapping {
	uint64_t start;
	uint64_t limit;
	uint64_t offset;
	int64_t file;
	int64_t build_id;
	bool has_functions;
	bool has_filenames;
	bool has_line_numbers;
	bool has_inline_frames;
};

struct pfunction {
	int64_t name;
	int64_t system_name;
	int64_t filename;
	int64_t start_line;
};

struct plocation {
	uint64_t mapping_id;
	uint64_t address;
	size_t line_off; /* into pprof.lines */
	size_t nlines;
};

struct plabel {
	int64_t key;
	int64_t str;
	int64_t num;
	int64_t num_unit;
	bool is_str;
};

struct psample {
	size_t loc_off; /* into pprof.sample_locs */
	size_t nlocs;
	size_t label_off; /* into pprof.labels */
	size_t nlabels;
	/* values live at pprof.values[index * pprof.ntypes] */
};

struct pprof {
	struct pvt *sample_types;
	size_t ntypes;
	struct pvt period_type;
	int64_t period;
	int64_t time_nanos;
	int64_t duration_nanos;
	int64_t default_sample_type;
	int64_t *comments;
	size_t ncomments, comments_cap;

	struct pstr *strs;
	size_t nstrs, strs_cap;
	struct htab strs_index;

	struct pmapping *mappings;
	size_t nmappings, mappings_cap;
	struct htab mappings_index;

	struct pfunction *functions;
	size_t nfunctions, functions_cap;
	struct htab functions_index;

	struct plocation *locations;
	size_t nlocations, locations_cap;
	struct htab locations_index;
	struct pprof_line *lines;
	size_t nlines, lines_cap;

	struct psample *samples;
	size_t nsamples, samples_cap;
	struct htab samples_index;
	uint64_t *sample_locs;
	size_t nsample_locs, sample_locs_cap;
	struct plabel *labels;
	size_t nlabels, labels_cap;
	int64_t *values;
	size_t values_cap;
};

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
	return hash_final(hash_bytes(HASH_SEED, s, len));
}

static int64_t str_intern(struct pprof *p, const char *s)
{
	struct str_key k = {s ? s : "", s ? strlen(s) : 0};
	uint32_t h = str_hash(k.s, k.len);
	struct htab_slot *slot;
	char *copy;
	int err;

	err = htab_reserve(&p->strs_index);
	if (err)
		return err;
	slot = htab_find(&p->strs_index, h, str_eq, p, &k);
	if (slot->id)
		return slot->id - 1;
	err = pprof__grow(&p->strs, &p->strs_cap, p->nstrs + 1, sizeof(*p->strs));
	if (err)
		return err;
	copy = malloc(k.len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, k.s, k.len + 1);
	p->strs[p->nstrs].s = copy;
	p->strs[p->nstrs].len = k.len;
	htab_set(&p->strs_index, slot, h, p->nstrs);
	return (int64_t)p->nstrs++;
}

/* Index of s without adding it; -1 when the profile never saw s. */
static int64_t str_lookup(const struct pprof *p, const char *s)
{
	struct str_key k = {s, strlen(s)};
	const struct htab_slot *slot;

	/* pprof__new() interned "", so the index exists and has a free slot. */
	slot = htab_find(&p->strs_index, str_hash(k.s, k.len), str_eq, p, &k);
	return slot->id ? (int64_t)slot->id - 1 : -1;
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
	htab_free(&p->strs_index);
	free(p->mappings);
	htab_free(&p->mappings_index);
	free(p->functions);
	htab_free(&p->functions_index);
	free(p->locations);
	htab_free(&p->locations_index);
	free(p->lines);
	free(p->samples);
	htab_free(&p->samples_index);
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
	idx = str_lookup(p, type);
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
	err = pprof__grow(&p->comments, &p->comments_cap, p->ncomments + 1, sizeof(*p->comments));
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

	h = hash_u64(h, m->start);
	h = hash_u64(h, m->limit);
	h = hash_u64(h, m->offset);
	h = hash_u64(h, (uint64_t)m->file);
	h = hash_u64(h, (uint64_t)m->build_id);
	h = hash_u64(h, flags);
	return hash_final(h);
}

uint64_t pprof__mapping(struct pprof *p, const struct pprof_mapping *m)
{
	struct pmapping k = {0};
	struct htab_slot *slot;
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
	if (htab_reserve(&p->mappings_index))
		return 0;
	slot = htab_find(&p->mappings_index, h, mapping_eq, p, &k);
	if (slot->id)
		return slot->id;
	if (pprof__grow(&p->mappings, &p->mappings_cap, p->nmappings + 1, sizeof(*p->mappings)))
		return 0;
	p->mappings[p->nmappings] = k;
	htab_set(&p->mappings_index, slot, h, p->nmappings);
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

	h = hash_u64(h, (uint64_t)f->name);
	h = hash_u64(h, (uint64_t)f->system_name);
	h = hash_u64(h, (uint64_t)f->filename);
	h = hash_u64(h, (uint64_t)f->start_line);
	return hash_final(h);
}

uint64_t pprof__function(struct pprof *p, const char *name, const char *system_name,
			 const char *filename, int64_t start_line)
{
	struct pfunction k;
	struct htab_slot *slot;
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
	if (htab_reserve(&p->functions_index))
		return 0;
	slot = htab_find(&p->functions_index, h, function_eq, p, &k);
	if (slot->id)
		return slot->id;
	if (pprof__grow(&p->functions, &p->functions_cap, p->nfunctions + 1, sizeof(*p->functions)))
		return 0;
	p->functions[p->nfunctions] = k;
	htab_set(&p->functions_index, slot, h, p->nfunctions);
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

	h = hash_u64(h, k->mapping_id);
	h = hash_u64(h, k->address);
	if (!k->address) {
		for (i = 0; i < k->nlines; i++) {
			h = hash_u64(h, k->lines[i].function_id);
			h = hash_u64(h, (uint64_t)k->lines[i].line);
		}
	}
	return hash_final(h);
}

uint64_t pprof__location(struct pprof *p, uint64_t mapping_id, uint64_t address,
			 const struct pprof_line *lines, size_t nlines)
{
	struct location_key k = {mapping_id, address, lines, nlines};
	struct plocation *loc;
	struct htab_slot *slot;
	uint32_t h;
	size_t i;

	if (!p || mapping_id > p->nmappings || (nlines && !lines))
		return 0;
	for (i = 0; i < nlines; i++) {
		if (!lines[i].function_id || lines[i].function_id > p->nfunctions)
			return 0;
	}

	h = location_hash(&k);
	if (htab_reserve(&p->locations_index))
		return 0;
	slot = htab_find(&p->locations_index, h, location_eq, p, &k);
	if (slot->id)
		return slot->id;
	if (pprof__grow(&p->locations, &p->locations_cap, p->nlocations + 1, sizeof(*p->locations)))
		return 0;
	if (pprof__grow(&p->lines, &p->lines_cap, p->nlines + nlines, sizeof(*p->lines)))
		return 0;
	loc = &p->locations[p->nlocations];
	loc->mapping_id = mapping_id;
	loc->address = address;
	loc->line_off = p->nlines;
	loc->nlines = nlines;
	if (nlines)
		memcpy(p->lines + p->nlines, lines, nlines * sizeof(*lines));
	p->nlines += nlines;
	htab_set(&p->locations_index, slot, h, p->nlocations);
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
		h = hash_u64(h, k->locs[i]);
	for (i = 0; i < k->nlabels; i++) {
		h = hash_u64(h, (uint64_t)k->labels[i].key);
		h = hash_u64(h, (uint64_t)k->labels[i].str);
		h = hash_u64(h, (uint64_t)k->labels[i].num);
	}
	return hash_final(h);
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

/* Adds as unsigned: wrapping is defined there, signed overflow is not. */
static void values_add(int64_t *dst, const int64_t *src, size_t n)
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
	err = pprof__grow(&p->labels, &p->labels_cap, p->nlabels + nlabels, sizeof(*p->labels));
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
	err = htab_reserve(&p->samples_index);
	if (err)
		return err;
	slot = htab_find(&p->samples_index, h, sample_eq, p, &k);
	if (slot->id) {
		values_add(p->values + (slot->id - 1) * p->ntypes, values, p->ntypes);
		return 0;
	}

	if (pprof__grow(&p->samples, &p->samples_cap, p->nsamples + 1, sizeof(*p->samples)) ||
	    pprof__grow(&p->sample_locs, &p->sample_locs_cap, p->nsample_locs + nlocs,
		 sizeof(*p->sample_locs)) ||
	    pprof__grow(&p->values, &p->values_cap, (p->nsamples + 1) * p->ntypes, sizeof(*p->values)))
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
	htab_set(&p->samples_index, slot, h, p->nsamples);
	p->nsamples++;
	return 0;
}

size_t pprof__sample_count(const struct pprof *p)
{
	return p ? p->nsamples : 0;
}

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
		pb__field_packed(msg, SAMPLE_LOCATION_ID, p->sample_locs + s->loc_off, s->nlocs);
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

/* ---- collapsed stacks -------------------------------------------------- */

/*
 * Folding runs in three passes so the per-sample work is integer hashing:
 * samples with the same root and locations are summed first, each location's
 * text is rendered once, and only then is every distinct stack rendered.
 * Different locations can share a text (two call sites in one function), so
 * the sorted stacks are merged once more when written out.
 */

struct strbuf {
	char *s;
	size_t len;
	size_t cap;
};

static int sb_put(struct strbuf *sb, const char *s, size_t len)
{
	int err = pprof__grow(&sb->s, &sb->cap, sb->len + len, 1);

	if (err)
		return err;
	memcpy(sb->s + sb->len, s, len);
	sb->len += len;
	return 0;
}

/* ';' separates frames and '\n' stacks, so neither may appear in a name. */
static int sb_put_name(struct strbuf *sb, const char *s, size_t len)
{
	size_t i, start = sb->len;
	int err = sb_put(sb, s, len);

	if (err)
		return err;
	for (i = start; i < sb->len; i++) {
		if (sb->s[i] == ';')
			sb->s[i] = ':';
		else if (sb->s[i] == '\n' || sb->s[i] == '\r')
			sb->s[i] = ' ';
	}
	return 0;
}

/* A frame with no function name: its address if it has one. */
static int sb_put_unknown(struct strbuf *sb, uint64_t address)
{
	char hex[2 + 16 + 1];
	int n;

	if (!address)
		return sb_put(sb, "[unknown]", strlen("[unknown]"));
	n = snprintf(hex, sizeof(hex), "0x%" PRIx64, address);
	return sb_put(sb, hex, (size_t)n);
}

/* The frames of one location, root-most first: a location's lines are
 * innermost first, so the inlined-into callers come out before it. */
static int sb_put_location(struct strbuf *sb, const struct pprof *p, const struct plocation *loc)
{
	const struct pprof_line *ln;
	const struct pstr *name;
	size_t j;
	int err;

	if (!loc->nlines)
		return sb_put_unknown(sb, loc->address);
	for (j = loc->nlines; j-- > 0;) {
		ln = &p->lines[loc->line_off + j];
		name = &p->strs[p->functions[ln->function_id - 1].name];
		err = j + 1 < loc->nlines ? sb_put(sb, ";", 1) : 0;
		if (!err)
			err = name->len ? sb_put_name(sb, name->s, name->len)
					: sb_put_unknown(sb, loc->address);
		if (err)
			return err;
	}
	return 0;
}

/* A distinct (root, locations) pair, then its text. */
struct fstack {
	int64_t root; /* string index, or -1 for none */
	size_t loc_off;
	size_t nlocs;
	int64_t sum;
	size_t text_off;
	size_t text_len;
	const char *text; /* set once folded.text stops growing */
};

struct folded {
	const struct pprof *p;
	struct fstack *stacks;
	size_t n, cap;
	struct htab index;
	size_t *frag_off; /* location i's text is frags[frag_off[i], frag_off[i + 1]) */
	struct strbuf frags;
	struct strbuf text;
};

static bool fstack_eq(const void *ctx, size_t idx, const void *key)
{
	const struct folded *f = ctx;
	const struct fstack *a = &f->stacks[idx];
	const struct fstack *b = key;

	return a->root == b->root && a->nlocs == b->nlocs &&
	       (!a->nlocs || !memcmp(f->p->sample_locs + a->loc_off, f->p->sample_locs + b->loc_off,
				     a->nlocs * sizeof(uint64_t)));
}

static uint32_t fstack_hash(const struct folded *f, const struct fstack *k)
{
	uint64_t h = hash_u64(HASH_SEED, (uint64_t)k->root);
	size_t i;

	for (i = 0; i < k->nlocs; i++)
		h = hash_u64(h, f->p->sample_locs[k->loc_off + i]);
	return hash_final(h);
}

/* The string value of the sample's first label called key, or -1. */
static int64_t sample_str_label(const struct pprof *p, const struct psample *s, int64_t key)
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

static int folded_add(struct folded *f, const struct psample *s, int64_t root, int64_t value)
{
	struct fstack k = {root, s->loc_off, s->nlocs, value, 0, 0, NULL};
	uint32_t h = fstack_hash(f, &k);
	struct htab_slot *slot;
	int err;

	err = htab_reserve(&f->index);
	if (err)
		return err;
	slot = htab_find(&f->index, h, fstack_eq, f, &k);
	if (slot->id) {
		values_add(&f->stacks[slot->id - 1].sum, &value, 1);
		return 0;
	}
	err = pprof__grow(&f->stacks, &f->cap, f->n + 1, sizeof(*f->stacks));
	if (err)
		return err;
	f->stacks[f->n] = k;
	htab_set(&f->index, slot, h, f->n++);
	return 0;
}

static int folded_render_locations(struct folded *f)
{
	const struct pprof *p = f->p;
	size_t i;
	int err;

	f->frag_off = calloc(p->nlocations + 1, sizeof(*f->frag_off));
	if (!f->frag_off)
		return -ENOMEM;
	for (i = 0; i < p->nlocations; i++) {
		f->frag_off[i] = f->frags.len;
		err = sb_put_location(&f->frags, p, &p->locations[i]);
		if (err)
			return err;
	}
	f->frag_off[p->nlocations] = f->frags.len;
	return 0;
}

/* Renders stack s root first, NUL-terminated for sorting. */
static int folded_render_stack(struct folded *f, struct fstack *s)
{
	const struct pprof *p = f->p;
	struct strbuf *t = &f->text;
	uint64_t loc;
	size_t i, start = t->len;
	int err = 0;

	if (s->root > 0)
		err = sb_put_name(t, p->strs[s->root].s, p->strs[s->root].len);
	/* Locations are leaf first. */
	for (i = s->nlocs; !err && i-- > 0;) {
		loc = p->sample_locs[s->loc_off + i];
		if (t->len > start)
			err = sb_put(t, ";", 1);
		if (!err)
			err = sb_put(t, f->frags.s + f->frag_off[loc - 1],
				     f->frag_off[loc] - f->frag_off[loc - 1]);
	}
	/* flamegraph.pl needs at least one frame before the count. */
	if (!err && t->len == start)
		err = sb_put_unknown(t, 0);
	if (err)
		return err;
	s->text_off = start;
	s->text_len = t->len - start;
	return sb_put(t, "", 1);
}

static int fstack_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fstack *)a)->text, ((const struct fstack *)b)->text);
}

/* Sorted "stack sum" lines; stacks that sum to 0 would draw nothing. */
static int folded_format(struct folded *f, char **out, size_t *out_len)
{
	/* A space, an int64 with its sign, and a newline. */
	const size_t per_line = 1 + 20 + 1;
	size_t i, j, len = 0, total = 1;
	const struct fstack *s;
	int64_t sum;
	char *buf;

	for (i = 0; i < f->n; i++)
		f->stacks[i].text = f->text.s + f->stacks[i].text_off;
	if (f->n)
		qsort(f->stacks, f->n, sizeof(*f->stacks), fstack_cmp);
	for (i = 0; i < f->n; i++) {
		if (f->stacks[i].text_len > SIZE_MAX - per_line - total)
			return -ENOMEM;
		total += f->stacks[i].text_len + per_line;
	}
	buf = malloc(total);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < f->n; i = j) {
		s = &f->stacks[i];
		sum = s->sum;
		for (j = i + 1; j < f->n && f->stacks[j].text_len == s->text_len &&
				!memcmp(f->stacks[j].text, s->text, s->text_len);
		     j++)
			values_add(&sum, &f->stacks[j].sum, 1);
		if (!sum)
			continue;
		memcpy(buf + len, s->text, s->text_len);
		len += s->text_len;
		len += (size_t)snprintf(buf + len, total - len, " %" PRId64 "\n", sum);
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

int pprof__folded(struct pprof *p, size_t value_index, const char *root_label, char **out,
		  size_t *out_len)
{
	struct folded f = {0};
	int64_t root_key = -1;
	const struct psample *s;
	size_t i;
	int err = 0;

	if (!p || value_index >= p->ntypes || !out || !out_len)
		return -EINVAL;
	f.p = p;
	if (root_label)
		root_key = str_lookup(p, root_label);
	for (i = 0; i < p->nsamples; i++) {
		s = &p->samples[i];
		err = folded_add(&f, s, sample_str_label(p, s, root_key),
				 p->values[i * p->ntypes + value_index]);
		if (err)
			goto cleanup;
	}
	err = folded_render_locations(&f);
	for (i = 0; !err && i < f.n; i++)
		err = folded_render_stack(&f, &f.stacks[i]);
	if (!err)
		err = folded_format(&f, out, out_len);
cleanup:
	free(f.stacks);
	htab_free(&f.index);
	free(f.frag_off);
	free(f.frags.s);
	free(f.text.s);
	return err;
}

/* ---- reading a profile back -------------------------------------------- */

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
	int err = pprof__grow(&w->hex, &w->hex_cap, need, sizeof(*w->hex));

	return err ?: pprof__grow(&w->frames, &w->cap, need, sizeof(*w->frames));
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

int pprof__for_each_stack(const struct pprof *p, size_t value_index, const char *root_label,
			  pprof_stack_fn fn, void *ctx)
{
	struct stack_walk w = {0};
	const struct psample *s;
	int64_t root_key = -1, root;
	size_t i, j, need;
	int err = 0;

	if (!p || value_index >= p->ntypes || !fn)
		return -EINVAL;
	if (root_label)
		root_key = str_lookup(p, root_label);
	w.kernel = calloc(p->nmappings + 1, sizeof(*w.kernel));
	if (!w.kernel)
		return -ENOMEM;
	for (i = 0; i < p->nmappings; i++)
		w.kernel[i] = !strcmp(p->strs[p->mappings[i].file].s, PPROF_KERNEL_MAPPING);
	for (i = 0; !err && i < p->nsamples; i++) {
		s = &p->samples[i];
		root = sample_str_label(p, s, root_key);
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
