// SPDX-License-Identifier: BSD-2-Clause
/*
 * /proc/kallsyms -> a sorted, de-duplicated table of kernel text symbols.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/htab.h"
#include "lib/log.h"
#include "symbolizer/kallsyms.h"

/* Set in ksym.flags for symbols that belong to a module (or bpf, ftrace
 * trampolines: anything kallsyms tags with [name]). */
#define KSYM_MODULE 0x80000000u
#define KSYM_NAME_MASK 0x7fffffffu
/* The low bits hold a preference rank used only while sorting. */
#define KSYM_RANK_MASK 0x0000ffffu

/* A symbol while the file is parsed and sorted. */
struct ksym {
	uint64_t addr;
	uint32_t off; /* of the name in the parse blob, then in ksyms.names */
	uint32_t flags;
};

/*
 * A symbol as it is kept, in 8 bytes rather than 16: its address as an
 * offset from its span's base, and its name's offset with KSYM_MODULE.
 */
struct ksym_kept {
	uint32_t rel;
	uint32_t name; /* offset in ksyms.names | KSYM_MODULE */
};

/*
 * A run of kept symbols within 4 GiB of its first.  The kernel's text and
 * its modules lie within 4 GiB of each other (x86-64 puts modules up to
 * 2 GiB above the image, arm64 up to 2 GiB below it), but arm64's BPF JIT
 * writes programs ("[bpf]" symbols) into vmalloc space, terabytes lower.
 * A single base at the image's start kept neither those programs nor the
 * modules below the image.
 */
struct ksym_span {
	uint64_t base;
	size_t first; /* index in ksyms.kept */
};

struct ksyms {
	struct ksym *syms; /* while loading: sorted by addr, one per address */
	struct ksym_kept *kept;
	struct ksym_span *spans; /* by base */
	size_t nsyms, nspans;
	char *names; /* NUL-terminated names, back to back */
	size_t names_len;
	uint64_t stext, etext;
};

/* A growable byte buffer for the names while parsing. */
struct blob {
	char *buf;
	size_t len, cap;
};

static int blob_reserve(struct blob *b, size_t extra)
{
	size_t cap = b->cap ? b->cap : 1 << 20;
	char *nbuf;

	if (b->len + extra <= b->cap)
		return 0;
	while (cap < b->len + extra)
		cap *= 2;
	nbuf = realloc(b->buf, cap);
	if (!nbuf)
		return -ENOMEM;
	b->buf = nbuf;
	b->cap = cap;
	return 0;
}

/*
 * Several names often share an address (_stext/_text, aliases, a weak
 * default and the symbol that overrides it).  Keep the one a person would
 * expect: a global T over a weak W over a local t, then the fewest leading
 * underscores (schedule rather than __schedule_alias).
 */
static uint32_t ksym_rank(char type, const char *name)
{
	uint32_t rank, under = 0;

	if (type == 'T')
		rank = 0;
	else if (type == 'W' || type == 'w')
		rank = 1;
	else
		rank = 2;
	while (name[under] == '_' && under < 255)
		under++;
	return rank << 8 | under;
}

/* Never `return a - b` on 64-bit addresses: the difference doesn't fit. */
static int ksym_cmp(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;
	uint32_t ra = a->flags & KSYM_RANK_MASK, rb = b->flags & KSYM_RANK_MASK;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (ra != rb)
		return ra < rb ? -1 : 1;
	/* Parse order breaks the remaining ties, so the choice is stable. */
	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return 0;
}

static bool is_text_type(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/*
 * Append one line's symbol.  Lines look like
 *   "ffffffff816b4af0 t do_sys_openat2"
 *   "ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]"
 * Malformed lines are skipped rather than failing the whole table.
 */
static int parse_line(struct ksyms *k, struct blob *names, size_t *cap, char *line, bool *nonzero)
{
	char *end, *name, *name_end, *mod = NULL, type;
	size_t name_len, mod_len = 0, need;
	unsigned long long addr;
	struct ksym *sym;

	errno = 0;
	addr = strtoull(line, &end, 16);
	if (end == line || errno || end[0] != ' ' || !end[1] || end[2] != ' ')
		return 0;
	type = end[1];
	name = end + 3;
	name_end = name + strcspn(name, "\t\n");
	name_len = name_end - name;
	if (!name_len)
		return 0;
	if (*name_end == '\t' && name_end[1] == '[') {
		mod = name_end + 2;
		mod_len = strcspn(mod, "]\n");
	}
	if (addr)
		*nonzero = true;

	if (!mod && name_len == 6 && !memcmp(name, "_stext", 6)) {
		k->stext = addr;
	} else if (!mod && name_len == 6 && !memcmp(name, "_etext", 6)) {
		/* An end marker, not a function: as a symbol it would claim
		 * everything up to the next one. */
		k->etext = addr;
		return 0;
	}
	if (!is_text_type(type))
		return 0;

	if (k->nsyms == *cap) {
		size_t ncap = *cap ? *cap * 2 : 65536;
		struct ksym *nsyms = realloc(k->syms, ncap * sizeof(*nsyms));

		if (!nsyms)
			return -ENOMEM;
		k->syms = nsyms;
		*cap = ncap;
	}
	/* "name [module]\0" */
	need = name_len + (mod ? mod_len + 3 : 0) + 1;
	if (names->len + need > UINT32_MAX || blob_reserve(names, need))
		return -ENOMEM;

	sym = &k->syms[k->nsyms++];
	sym->addr = addr;
	sym->off = names->len;
	name[name_len] = '\0';
	sym->flags = ksym_rank(type, name) | (mod ? KSYM_MODULE : 0);
	memcpy(names->buf + names->len, name, name_len);
	names->len += name_len;
	if (mod) {
		names->buf[names->len++] = ' ';
		names->buf[names->len++] = '[';
		memcpy(names->buf + names->len, mod, mod_len);
		names->len += mod_len;
		names->buf[names->len++] = ']';
	}
	names->buf[names->len++] = '\0';
	return 0;
}

/*
 * Sort, keep one symbol per address, cut the symbols into spans of 4 GiB
 * at most, and copy the kept names into a blob of exactly the right size:
 * the parse buffer also holds the dropped aliases.
 */
static int compact(struct ksyms *k, struct blob *names)
{
	size_t i, n = 0, len = 0, spans_cap = 0;
	uint64_t base = 0;
	char *blob;

	if (k->nsyms > (size_t)1 << 31)
		return -E2BIG;	/* names' offsets share 32 bits with a flag */
	qsort(k->syms, k->nsyms, sizeof(*k->syms), ksym_cmp);
	for (i = 0; i < k->nsyms; i++) {
		if (n && k->syms[n - 1].addr == k->syms[i].addr)
			continue;
		k->syms[n++] = k->syms[i];
		len += strlen(names->buf + k->syms[i].off) + 1;
	}
	if (!n)
		return -ENOENT;
	if (len > KSYM_NAME_MASK)
		return -E2BIG;

	blob = malloc(len);
	if (!blob)
		return -ENOMEM;
	len = 0;
	for (i = 0; i < n; i++) {
		const char *name = names->buf + k->syms[i].off;
		size_t l = strlen(name) + 1;

		memcpy(blob + len, name, l);
		k->syms[i].off = len;
		k->syms[i].flags &= KSYM_MODULE;
		len += l;
	}
	k->names = blob;
	k->names_len = len;
	k->nsyms = n;
	k->kept = malloc(n * sizeof(*k->kept));
	if (!k->kept)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		/* A new span where the next symbol is out of the last base's
		 * 32 bits: one on x86-64, two on arm64 with the JIT's far
		 * [bpf] programs. */
		if (!k->nspans || k->syms[i].addr - base > UINT32_MAX) {
			if (array__grow(&k->spans, &spans_cap, k->nspans + 1, sizeof(*k->spans)))
				return -ENOMEM;
			base = k->syms[i].addr;
			k->spans[k->nspans++] = (struct ksym_span){base, i};
		}
		k->kept[i] = (struct ksym_kept){(uint32_t)(k->syms[i].addr - base),
						k->syms[i].off | (k->syms[i].flags & KSYM_MODULE)};
	}
	return 0;
}

/* Without _stext/_etext, fall back to the span of the core (non-module)
 * text symbols. */
static void fix_range(struct ksyms *k)
{
	size_t i;

	if (k->stext && k->etext > k->stext)
		return;
	k->stext = k->etext = 0;
	for (i = 0; i < k->nsyms; i++) {
		if (k->syms[i].flags & KSYM_MODULE)
			continue;
		if (!k->stext)
			k->stext = k->syms[i].addr;
		k->etext = k->syms[i].addr + 1;
	}
}

int ksyms__load(const char *path, struct ksyms **out)
{
	struct blob names = {0};
	struct ksyms *k = NULL;
	bool nonzero = false;
	size_t cap = 0, linecap = 0;
	char *line = NULL;
	FILE *f = NULL;
	int err;

	*out = NULL;
	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		goto cleanup;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (getline(&line, &linecap, f) > 0) {
		err = parse_line(k, &names, &cap, line, &nonzero);
		if (err)
			goto cleanup;
	}
	if (ferror(f)) {
		err = -EIO;
		goto cleanup;
	}
	if (!nonzero && k->nsyms) {
		/* kptr_restrict hides the addresses from this process. */
		err = -EPERM;
		goto cleanup;
	}
	if (!k->nsyms) {
		err = -ENOENT;
		goto cleanup;
	}
	err = compact(k, &names);
	if (err)
		goto cleanup;
	fix_range(k);
	/* The parse form goes: what is kept is k->kept. */
	free(k->syms);
	k->syms = NULL;
	*out = k;
	k = NULL;
cleanup:
	free(line);
	free(names.buf);
	if (f)
		fclose(f);
	ksyms__free(k);
	return err;
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->kept);
	free(k->spans);
	free(k->names);
	free(k);
}

const char *ksyms__find(const struct ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->nspans, end;
	const struct ksym_kept *sym;
	const struct ksym_span *span;
	uint64_t sym_addr;
	uint32_t rel;

	/* The last span starting at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->spans[mid].base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	span = &k->spans[lo - 1];
	end = lo < k->nspans ? k->spans[lo].first : k->nsyms;
	/* Every symbol of the span is within 4 GiB of its base: past that,
	 * past them all. */
	rel = addr - span->base > UINT32_MAX ? UINT32_MAX : (uint32_t)(addr - span->base);
	/* The last symbol at or below addr; the span's first is at rel 0. */
	lo = span->first + 1;
	hi = end;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->kept[mid].rel <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	sym = &k->kept[lo - 1];
	sym_addr = span->base + sym->rel;
	/* kallsyms has no sizes.  Past _etext the nearest core symbol below is
	 * a guess, not an answer; module symbols have no known end at all. */
	if (!(sym->name & KSYM_MODULE) && sym_addr < k->etext && addr >= k->etext)
		return NULL;
	return k->names + (sym->name & KSYM_NAME_MASK);
}

void ksyms__range(const struct ksyms *k, uint64_t *start, uint64_t *limit)
{
	*start = k->stext;
	*limit = k->etext;
}

size_t ksyms__bytes(const struct ksyms *k)
{
	return k ? sizeof(*k) + k->nsyms * sizeof(*k->kept) + k->nspans * sizeof(*k->spans) +
			   k->names_len : 0;
}
