// SPDX-License-Identifier: BSD-2-Clause
/*
 * The functions and inlined instances of a compile unit, by address: built
 * with one walk of the unit's DIEs the first time an address in it is
 * asked for, then searched.  libdw's dwarf_getscopes and
 * dwarf_getscopes_die walk the unit from its root on every call: for
 * libc6-dbg's units that was ~40% of the daemon's CPU under a churn of
 * short-lived programs, each new address costing a walk.
 *
 * Only the DIEs that can hold code are entered (subprograms, inlined
 * subroutines, entry points) and only the ones that can contain them are
 * descended into (those, lexical blocks, namespaces, modules, try and catch
 * blocks): types and variables, most of a unit, are skipped.  Imported
 * (dwz) units are not followed: dwz moves no DIE that has addresses.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/htab.h"
#include "symbolizer/obj.h"

/* A DIE that holds code. */
struct scope_die {
	Dwarf_Die die;		/* valid while the object's Dwarf is */
	int32_t parent;		/* the enclosing function or inline, or -1 */
	bool inlined;		/* DW_TAG_inlined_subroutine */
};

/* One of its address ranges; a unit's are sorted by lo, outer first. */
struct scope_range {
	uint64_t lo, hi;
	uint32_t die;
	uint32_t depth;		/* 0: a function; 1: inlined into one; ... */
};

struct cu_scopes {
	Dwarf_Off cu;		/* the unit DIE's offset: the key */
	struct scope_die *dies;
	size_t ndies;
	struct scope_range *ranges;
	size_t nranges;
};

/* The walk's stack bound: deeper nesting (never seen) is not indexed. */
#define SCOPES_DEPTH 64
/* A lookup walks back over at most this many ranges for the function
 * holding pc: more than any function's inlines, short of a whole unit. */
#define SCOPES_BACK 8192

static bool descend(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_entry_point:
	case DW_TAG_lexical_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
		return true;
	default:
		return false;
	}
}

static int add_die(struct cu_scopes *cs, size_t *cap, Dwarf_Die *die, int32_t parent, bool inl)
{
	if (array__grow(&cs->dies, cap, cs->ndies + 1, sizeof(*cs->dies)))
		return -ENOMEM;
	cs->dies[cs->ndies] = (struct scope_die){.die = *die, .parent = parent, .inlined = inl};
	return (int)cs->ndies++;
}

static int add_range(struct cu_scopes *cs, size_t *cap, uint64_t lo, uint64_t hi, uint32_t die,
		     uint32_t depth)
{
	if (array__grow(&cs->ranges, cap, cs->nranges + 1, sizeof(*cs->ranges)))
		return -ENOMEM;
	cs->ranges[cs->nranges++] = (struct scope_range){lo, hi, die, depth};
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct scope_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->die < y->die ? -1 : x->die > y->die;
}

/* Its ranges, entered at depth; 1 if it has any, 0 if none (a declaration
 * or an abstract instance), or negative errno. */
static int die_ranges(struct cu_scopes *cs, size_t *rcap, Dwarf_Die *die, uint32_t idx,
		      uint32_t depth)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int any = 0, err;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		err = add_range(cs, rcap, lo, hi, idx, depth);
		if (err)
			return err;
		any = 1;
	}
	return any;
}

static int index_cu(Dwarf_Die *cudie, struct cu_scopes *cs)
{
	struct {
		Dwarf_Die die;
		int32_t parent;	/* enclosing function or inline */
		uint32_t depth;	/* of the next function found inside */
	} st[SCOPES_DEPTH];
	size_t dcap = 0, rcap = 0;
	int top = 0, r, err;

	if (dwarf_child(cudie, &st[0].die) != 0)
		return 0;
	st[0].parent = -1;
	st[0].depth = 0;
	for (;;) {
		Dwarf_Die *d = &st[top].die;
		int tag = dwarf_tag(d);
		int32_t parent = st[top].parent;
		uint32_t depth = st[top].depth;
		bool down = descend(tag);

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_entry_point) {
			int idx = add_die(cs, &dcap, d, parent, tag == DW_TAG_inlined_subroutine);

			if (idx < 0)
				return idx;
			r = die_ranges(cs, &rcap, d, (uint32_t)idx, depth);
			if (r < 0)
				return r;
			if (r == 0) {
				cs->ndies--;	/* no code: nothing inside has any */
				down = false;
			} else {
				parent = idx;
				depth++;
			}
		}
		if (down && top + 1 < SCOPES_DEPTH && dwarf_child(d, &st[top + 1].die) == 0) {
			top++;
			st[top].parent = parent;
			st[top].depth = depth;
			continue;
		}
		/* Next sibling, climbing while a level is done. */
		while ((err = dwarf_siblingof(&st[top].die, &st[top].die)) != 0) {
			if (err < 0 || top == 0)
				goto done;
			top--;
		}
	}
done:
	if (cs->nranges > 1)
		qsort(cs->ranges, cs->nranges, sizeof(*cs->ranges), range_cmp);
	return 0;
}

static uint32_t cu_hash(Dwarf_Off off)
{
	return hash__final(hash__u64(HASH_SEED, off));
}

static bool cu_eq(const void *ctx, size_t pos, const void *key)
{
	const struct scopes *sc = ctx;

	return sc->v[pos].cu == *(const Dwarf_Off *)key;
}

/* The unit's index, built now if it is new; NULL when out of memory. */
static struct cu_scopes *cu_get(struct scopes *sc, Dwarf_Die *cudie)
{
	Dwarf_Off off = dwarf_dieoffset(cudie);
	uint32_t h = cu_hash(off);
	struct htab_slot *slot;
	struct cu_scopes *cs;
	size_t oldcap;
	long pos;

	if (htab__reserve(&sc->index))
		return NULL;
	pos = htab__find(&sc->index, h, cu_eq, sc, &off, &slot);
	if (pos >= 0)
		return &sc->v[pos];
	oldcap = sc->cap;
	if (array__grow(&sc->v, &sc->cap, sc->n + 1, sizeof(*sc->v)))
		return NULL;
	sc->bytes += (sc->cap - oldcap) * sizeof(*sc->v);
	cs = &sc->v[sc->n];
	memset(cs, 0, sizeof(*cs));
	cs->cu = off;
	if (index_cu(cudie, cs)) {
		free(cs->dies);
		free(cs->ranges);
		return NULL;
	}
	sc->bytes += cs->ndies * sizeof(*cs->dies) + cs->nranges * sizeof(*cs->ranges);
	htab__set(&sc->index, slot, h, sc->n);
	return &sc->v[sc->n++];
}

int scopes__at(struct scopes *sc, Dwarf_Die *cudie, uint64_t pc, Dwarf_Die *out, bool *inlined,
	       int max)
{
	struct cu_scopes *cs = cu_get(sc, cudie);
	size_t lo = 0, hi, back;
	long best = -1;
	uint32_t best_depth = 0;
	int n = 0;

	if (!cs)
		return -ENOMEM;
	/* The last range starting at or before pc. */
	hi = cs->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cs->ranges[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Back from there: the deepest range holding pc, until the function
	 * holding it (an outer range starts no later than what it holds). */
	for (back = 0; lo > 0 && back < SCOPES_BACK; back++) {
		const struct scope_range *r = &cs->ranges[--lo];

		if (pc >= r->hi)
			continue;
		/* Equal depth: the earlier DIE, as libdw's walk finds it (an
		 * assembly unit's aliases share one range: __getpid, getpid). */
		if (best < 0 || r->depth > best_depth ||
		    (r->depth == best_depth && r->die < (uint32_t)best)) {
			best = r->die;
			best_depth = r->depth;
		}
		/* The function: done, once the aliases starting with it are. */
		if (r->depth == 0 && (lo == 0 || cs->ranges[lo - 1].lo != r->lo))
			break;
	}
	/* Innermost first, up to the function itself. */
	for (long i = best; i >= 0 && n < max; i = cs->dies[i].parent) {
		out[n] = cs->dies[i].die;
		inlined[n] = cs->dies[i].inlined;
		n++;
		if (!cs->dies[i].inlined)
			break;
	}
	return n;
}

void scopes__free(struct scopes *sc)
{
	for (size_t i = 0; i < sc->n; i++) {
		free(sc->v[i].dies);
		free(sc->v[i].ranges);
	}
	free(sc->v);
	htab__free(&sc->index);
	memset(sc, 0, sizeof(*sc));
}
