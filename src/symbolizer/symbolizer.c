// SPDX-License-Identifier: BSD-2-Clause
/*
 * symbolizer: the cache of ELF objects (obj.c loads them, frames.c answers
 * for them) and kallsyms for the kernel.
 *
 * One cache entry per object identity (dev, ino), each with its own Dwfl
 * holding one module at its ELF addresses, and a cache of resolved offsets,
 * because a profiler asks about the same hot addresses over and over: a
 * repeated lookup is a hash of (dev, ino), a hash of the offset, and a copy.
 * An object whose file changed (size, mtime, ctime) is dropped and opened
 * again: a binary overwritten in place is another binary.  So is one whose
 * debug file debuginfod has fetched since it was loaded without one: the
 * fetch started when the object was first opened (usually by the unwinder,
 * at the first sample), and the names are usually wanted when the profile
 * is symbolized, seconds later.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/htab.h"
#include "lib/log.h"
#include "lib/sigbus.h"
#include "symbolizer/kallsyms.h"
#include "symbolizer/obj.h"
#include "symbolizer/symbolizer.h"

struct symbolizer {
	size_t max_bytes;
	size_t max_objects;	/* each holds up to 3 fds: its file, libdw's, a debug file */
	size_t bytes;		/* sum of sym_obj.bytes */
	struct sym_obj **objs;	/* every cached object, in no order */
	size_t nobjs, objs_cap;
	struct htab index;	/* (dev, ino) -> position in objs */
	struct sym_obj lru;	/* sentinel */
	struct ksyms *ksyms;
	int ksyms_err;		/* cached permanent failure of kallsyms */
	struct debuginfod *dbgd;	/* NULL: DEBUGINFOD_URLS not set */
	bool shares_dbgd;		/* dbgd is another symbolizer's */
	bool coarse;		/* symbol tables only, no DWARF (symbolizer__set_coarse) */
	bool cfi_only;		/* unwinds, never names (symbolizer__new_unwinder) */
	/* What /metrics reads, from another thread than the one using the
	 * symbolizer: written with atomic stores by publish(). */
	size_t pub_bytes, pub_objects;
	/* Files held to OBJ_READ_MAX or OBJ_DWARF_READ_MAX (obj.c): refused, or
	 * symbolized without DWARF.  Atomic: /metrics reads it too. */
	size_t refused;
	uint64_t loads;		/* objects opened (atomic: symbolizer__loads) */
	/*
	 * The builder's lookups come in batches, a profile each
	 * (symbolizer__end_batch): an object used in the current one is not
	 * evicted for bytes until it ends.  A profile visits its objects over
	 * and over, sample by sample, and an LRU smaller than that set misses
	 * nearly every time: under --max-memory 24 and churn one 20 s profile
	 * reopened 282 objects, 2.7 s of CPU.  Pinned, each is opened once per
	 * profile at most, and the cache goes back to its bound at the end.
	 * Pinned objects never take the cache past pin_max_bytes, the bound
	 * as set (symbolizer__new, _set_limits), which memory pressure's
	 * shrinking leaves alone: a build under pressure may use what the
	 * cache holds without it, never more, whatever files a local user
	 * maps (obj.c reads another user's file into memory).  The bound on
	 * objects (file descriptors) stays strict.  The unwinder's cache
	 * (cfi_only) has no batches: it is never pinned.
	 */
	uint64_t batch;
	size_t pin_max_bytes;
	uint64_t misses;	/* lookups rcache did not answer */
};

/*
 * A lookup reads a few bytes of DWARF here and there, but each page fault
 * on a mapped file maps the 16 pages around it that are in the page cache
 * (the kernel's fault-around), and a debug file inflated on disk (scratch.h)
 * is all in the page cache: a build that read 131 places in libc's copy had
 * 8 MB of it resident.  Every so many lookups the pages go (clean page
 * cache: nothing is lost, a minor fault brings one back), so what stays in
 * the RSS is what the last lookups read.
 */
#define SYMBOLIZER_RELEASE_EVERY 64

/* Load o's DWARF (once), counting a refusal. */
static void load_dwarf(struct symbolizer *s, struct sym_obj *o)
{
	bool before = o->dwarf_loaded;

	obj__load_dwarf(o);
	if (!before && o->dwarf_refused)
		__atomic_add_fetch(&s->refused, 1, __ATOMIC_RELAXED);
	/* Loading read its index of units and lines out of every page of the
	 * sections it indexed: those pages need not stay. */
	if (!before)
		obj__release_pages(o);
}

static void publish(struct symbolizer *s)
{
	__atomic_store_n(&s->pub_bytes,
			 s->bytes + s->objs_cap * sizeof(*s->objs) + htab__bytes(&s->index) +
				 ksyms__bytes(s->ksyms),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&s->pub_objects, s->nobjs, __ATOMIC_RELAXED);
}

/* --- the object cache --- */

struct obj_key {
	uint64_t dev, ino;
};

static uint32_t obj_hash(uint64_t dev, uint64_t ino)
{
	return hash__final(hash__u64(hash__u64(HASH_SEED, dev), ino));
}

static bool obj_eq(const void *ctx, size_t pos, const void *key)
{
	const struct sym_obj *o = ((const struct symbolizer *)ctx)->objs[pos];
	const struct obj_key *k = key;

	return o->dev == k->dev && o->ino == k->ino;
}

static long obj_pos(const struct symbolizer *s, uint64_t dev, uint64_t ino)
{
	struct obj_key k = {dev, ino};

	return htab__find(&s->index, obj_hash(dev, ino), obj_eq, s, &k, NULL);
}

static int tab_insert(struct symbolizer *s, struct sym_obj *o)
{
	struct obj_key k = {o->dev, o->ino};
	struct htab_slot *slot;
	int err;

	err = htab__reserve(&s->index);
	err = err ?: array__grow(&s->objs, &s->objs_cap, s->nobjs + 1, sizeof(*s->objs));
	if (err)
		return err;
	htab__find(&s->index, obj_hash(o->dev, o->ino), obj_eq, s, &k, &slot);
	s->objs[s->nobjs] = o;
	htab__set(&s->index, slot, obj_hash(o->dev, o->ino), s->nobjs++);
	publish(s);
	return 0;
}

static void tab_remove(struct symbolizer *s, struct sym_obj *o)
{
	long pos = obj_pos(s, o->dev, o->ino);
	size_t last = s->nobjs - 1;

	if (pos < 0)
		return;
	htab__remove(&s->index, obj_hash(o->dev, o->ino), pos);
	if ((size_t)pos != last) {
		s->objs[pos] = s->objs[last];
		htab__move(&s->index, obj_hash(s->objs[pos]->dev, s->objs[pos]->ino), last, pos);
	}
	s->nobjs--;
}

static void lru_unlink(struct sym_obj *o)
{
	o->prev->next = o->next;
	o->next->prev = o->prev;
}

static void lru_push(struct symbolizer *s, struct sym_obj *o)
{
	o->prev = &s->lru;
	o->next = s->lru.next;
	s->lru.next->prev = o;
	s->lru.next = o;
}

/* Bring symbolizer.bytes up to date with what o holds now. */
static void account(struct symbolizer *s, struct sym_obj *o)
{
	size_t now = o->base_bytes + o->rc.bytes + o->strs.bytes + o->scopes.bytes +
		     o->lines.bytes;

	s->bytes = s->bytes - o->bytes + now;
	o->bytes = now;
	publish(s);
}

static void drop(struct symbolizer *s, struct sym_obj *o)
{
	lru_unlink(o);
	tab_remove(s, o);
	s->bytes -= o->bytes;
	obj__free(o);
	publish(s);
}

/* Evict least recently used objects until under budget, but never keep, the
 * one the current call uses: the strings it returns must stay valid.  keep
 * is always the newest, so everything else goes first. */
static void evict(struct symbolizer *s, struct sym_obj *keep)
{
	while (s->bytes > s->max_bytes || s->nobjs > s->max_objects) {
		struct sym_obj *o = s->lru.prev;

		if (o == &s->lru || o == keep)
			break;
		/* Over on bytes alone, and the least recently used object is in
		 * this batch, so all of them are: they stay until its end, up to
		 * the bound as set. */
		if (s->nobjs <= s->max_objects && !s->cfi_only && o->batch == s->batch &&
		    s->bytes <= s->pin_max_bytes)
			break;
		drop(s, o);
	}
}

/* The cache entry for key, loaded if needed and made the newest.  Returns
 * the entry's error for a cached unusable object. */
static int get_object(struct symbolizer *s, const struct sym_object_key *key, struct sym_obj **out)
{
	struct sym_object_key k;
	struct sym_obj *o = NULL;
	long pos;
	int err;

	*out = NULL;
	if (!s || !key || !key->path)
		return -EINVAL;
	k = *key;
	/* The vDSO has no file and no identity: 0/0 is its key. */
	if (!k.dev && !k.ino && strcmp(k.path, "[vdso]")) {
		/* No identity given: take the path's current one, so the
		 * entry is still shared with callers that pass dev/ino. */
		struct stat st;

		if (stat(k.path, &st))
			return -errno;
		k.dev = st.st_dev;
		k.ino = st.st_ino;
	}
	pos = obj_pos(s, k.dev, k.ino);
	if (pos >= 0) {
		int64_t now = clock__mono_ns();

		o = s->objs[pos];
		if (obj__stale(o, now) || obj__debuginfo_arrived(o, now)) {
			drop(s, o);
			o = NULL;
		} else {
			lru_unlink(o);
		}
	}
	if (!o) {
		err = obj__open(&k, s->dbgd, !s->cfi_only, &o);
		if (err)
			return err;
		__atomic_add_fetch(&s->loads, 1, __ATOMIC_RELAXED);
		/* Loading sorted every symbol of its tables (libdwfl keeps its
		 * own copy): the pages read need not stay in our RSS. */
		obj__release_pages(o);
		if (o->err == -EFBIG)
			__atomic_add_fetch(&s->refused, 1, __ATOMIC_RELAXED);
		err = tab_insert(s, o);
		if (err) {
			obj__free(o);
			return err;
		}
	}
	lru_push(s, o);
	o->batch = s->batch;
	account(s, o);
	evict(s, o);
	*out = o;
	return o->err;
}

/* --- public API --- */

static struct symbolizer *symbolizer_new(size_t max_bytes, struct symbolizer *with)
{
	struct symbolizer *s;

	/* Before any file is mapped (see faulted). */
	if (sigbus__install())
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->max_bytes = s->pin_max_bytes = max_bytes;
	s->max_objects = SYMBOLIZER_DEFAULT_MAX_OBJECTS;
	s->batch = 1;
	s->lru.next = s->lru.prev = &s->lru;
	if (with) {
		s->dbgd = with->dbgd;
		s->shares_dbgd = true;
		s->cfi_only = true;
		return s;
	}
	/* Without its thread, debuginfod is just off: local debug files and
	 * symbol tables still work, and /metrics shows no requests. */
	if (debuginfod__new(&s->dbgd) == -ENOMEM) {
		free(s);
		return NULL;
	}
	return s;
}

struct symbolizer *symbolizer__new(size_t max_bytes)
{
	return symbolizer_new(max_bytes, NULL);
}

struct symbolizer *symbolizer__new_unwinder(size_t max_bytes, struct symbolizer *with)
{
	return symbolizer_new(max_bytes, with);
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	while (s->lru.next != &s->lru) {
		struct sym_obj *o = s->lru.next;

		lru_unlink(o);
		obj__free(o);
	}
	free(s->objs);
	htab__free(&s->index);
	ksyms__free(s->ksyms);
	if (!s->shares_dbgd)
		debuginfod__free(s->dbgd);
	free(s);
}

static int object_info(struct symbolizer *s, const struct sym_object_key *key,
		       struct sym_object_info *info)
{
	struct sym_obj *o;
	int err;

	err = get_object(s, key, &o);
	if (err)
		return err;
	if (!s->coarse)
		load_dwarf(s, o);
	account(s, o);
	evict(s, o);
	*info = o->info;
	info->build_id = o->build_id;
	return 0;
}

static int resolve(struct symbolizer *s, const struct sym_object_key *key, uint64_t file_offset,
		   struct sym_result *res)
{
	struct sym_frame frames[SYM_MAX_FRAMES];
	struct rc_entry *e;
	struct sym_obj *o;
	uint64_t vaddr;
	int err, n = 0;

	res->nframes = 0;
	err = get_object(s, key, &o);
	if (err)
		return err;
	e = rc__find(&o->rc, file_offset);
	if (e) {
		if (e->nframes)
			memcpy(res->frames, e->frames, e->nframes * sizeof(*e->frames));
		res->nframes = e->nframes;
		return 0;
	}
	if (s->coarse) {
		if (obj__vaddr(o, file_offset, &vaddr))
			n = obj__symbol_frames(o, vaddr, frames);
		o->coarse = true;
	} else {
		load_dwarf(s, o);
		if (obj__vaddr(o, file_offset, &vaddr))
			n = obj__frames(o, vaddr, frames);
	}
	memcpy(res->frames, frames, n * sizeof(*frames));
	res->nframes = n;
	if (++s->misses % SYMBOLIZER_RELEASE_EVERY == 0)
		symbolizer__release_pages(s);
	/* Out of memory only costs the caching; the answer is still right. */
	rc__insert(&o->rc, file_offset, frames, n);
	account(s, o);
	evict(s, o);
	return 0;
}

/* CFI lookups don't load DWARF: .eh_frame is in the main file, and
 * .debug_frame is used only once symbolizing loaded DWARF anyway. */
static int cfi(struct symbolizer *s, const struct sym_object_key *key, uint64_t file_offset,
	       struct sym_cfi *row)
{
	struct sym_obj *o;
	uint64_t vaddr;
	int err;

	err = get_object(s, key, &o);
	if (err)
		return err;
	if (!obj__vaddr(o, file_offset, &vaddr))
		return -ENOENT;
	return obj__cfi(o, vaddr, row);
}

static int cfi_eval(struct symbolizer *s, const struct sym_object_key *key, uint64_t file_offset,
		    const struct sym_regs *in, sym_read_fn rd, void *ctx, struct sym_regs *caller)
{
	struct sym_obj *o;
	uint64_t vaddr;
	int err;

	err = get_object(s, key, &o);
	if (err)
		return err;
	if (!obj__vaddr(o, file_offset, &vaddr))
		return -ENOENT;
	return obj__cfi_eval(o, vaddr, in, rd, ctx, caller);
}

/*
 * A file only root can change is mapped (obj.c), and root may still
 * rewrite it in place (cp over it) while the cache holds it: a read past
 * its new end raises SIGBUS.  Every call that reads an object's file runs
 * under a guard; a fault ends the call with -EIO, and the object leaves
 * the cache without being freed (libdw may have been halfway through an
 * update of its own structures): its memory and descriptors are lost,
 * once, rather than the daemon.
 */
static int faulted(struct symbolizer *s, const struct sym_object_key *key)
{
	struct stat st;
	uint64_t dev = key->dev, ino = key->ino;
	struct sym_obj *o;
	long pos;

	if (!dev && !ino && strcmp(key->path, "[vdso]") && stat(key->path, &st) == 0) {
		dev = st.st_dev;
		ino = st.st_ino;
	}
	log__warn("%s: the file shrank while it was read (rewritten in place?): dropped",
		  key->path);
	pos = obj_pos(s, dev, ino);
	if (pos < 0)
		return -EIO;
	o = s->objs[pos];
	lru_unlink(o);
	tab_remove(s, o);
	s->bytes -= o->bytes;
	publish(s);
	return -EIO;
}

/* Runs CALL (an expression giving an int) under a SIGBUS guard. */
#define GUARDED(s, key, call)						\
	({								\
		struct sigbus_guard __g;				\
		int __err;						\
									\
		if (!(s) || !(key) || !(key)->path)			\
			return -EINVAL;					\
		if (sigsetjmp(__g.env, 0)) {				\
			sigbus__leave(&__g);				\
			return faulted(s, key);				\
		}							\
		sigbus__enter(&__g);					\
		__err = (call);						\
		sigbus__leave(&__g);					\
		__err;							\
	})

int symbolizer__object_info(struct symbolizer *s, const struct sym_object_key *key,
			    struct sym_object_info *info)
{
	return GUARDED(s, key, object_info(s, key, info));
}

int symbolizer__resolve(struct symbolizer *s, const struct sym_object_key *key,
			uint64_t file_offset, struct sym_result *res)
{
	res->nframes = 0;
	return GUARDED(s, key, resolve(s, key, file_offset, res));
}

int symbolizer__cfi(struct symbolizer *s, const struct sym_object_key *key, uint64_t file_offset,
		    struct sym_cfi *row)
{
	return GUARDED(s, key, cfi(s, key, file_offset, row));
}

int symbolizer__cfi_eval(struct symbolizer *s, const struct sym_object_key *key,
			 uint64_t file_offset, const struct sym_regs *in, sym_read_fn rd, void *ctx,
			 struct sym_regs *caller)
{
	return GUARDED(s, key, cfi_eval(s, key, file_offset, in, rd, ctx, caller));
}

/* kallsyms is read once.  A failure that won't go away (no permission, no
 * file) is remembered; anything else is retried on the next call. */
static int kernel_load(struct symbolizer *s)
{
	int err;

	if (s->ksyms)
		return 0;
	if (s->ksyms_err)
		return s->ksyms_err;
	err = ksyms__load("/proc/kallsyms", &s->ksyms);
	publish(s);
	if (err == -EPERM || err == -EACCES || err == -ENOENT)
		s->ksyms_err = err;
	return err;
}

int symbolizer__resolve_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *res)
{
	const char *name;
	int err;

	res->nframes = 0;
	if (!s)
		return -EINVAL;
	err = kernel_load(s);
	if (err)
		return err;
	name = ksyms__find(s->ksyms, addr);
	if (name) {
		res->frames[0].function = name;
		res->frames[0].system_name = NULL;
		res->frames[0].file = NULL;
		res->frames[0].line = 0;
		res->nframes = 1;
	}
	return 0;
}

int symbolizer__kernel_range(struct symbolizer *s, uint64_t *start, uint64_t *limit)
{
	int err;

	if (!s)
		return -EINVAL;
	err = kernel_load(s);
	if (err)
		return err;
	ksyms__range(s->ksyms, start, limit);
	return 0;
}

size_t symbolizer__cache_bytes(const struct symbolizer *s)
{
	return s ? __atomic_load_n(&s->pub_bytes, __ATOMIC_RELAXED) : 0;
}

size_t symbolizer__refused(const struct symbolizer *s)
{
	return s ? __atomic_load_n(&s->refused, __ATOMIC_RELAXED) : 0;
}

size_t symbolizer__cache_objects(const struct symbolizer *s)
{
	return s ? __atomic_load_n(&s->pub_objects, __ATOMIC_RELAXED) : 0;
}

void symbolizer__set_limits(struct symbolizer *s, size_t max_bytes, size_t max_objects)
{
	s->max_bytes = max_bytes ? max_bytes : SYMBOLIZER_DEFAULT_MAX_BYTES;
	s->pin_max_bytes = s->max_bytes;
	s->max_objects = max_objects ? max_objects : SYMBOLIZER_DEFAULT_MAX_OBJECTS;
	/* Called between profiles: whatever the last one used may go. */
	s->batch++;
	evict(s, NULL);
}

void symbolizer__end_batch(struct symbolizer *s)
{
	s->batch++;
	evict(s, NULL);
	symbolizer__release_pages(s);
}

size_t symbolizer__shrink(struct symbolizer *s, unsigned percent, size_t floor_bytes)
{
	size_t before = s->bytes, bound = s->bytes / 100 * (percent < 100 ? percent : 100);

	if (bound < floor_bytes)
		bound = floor_bytes;
	if (bound < s->max_bytes)
		s->max_bytes = bound;
	s->batch++;
	evict(s, NULL);
	return before - s->bytes;
}

uint64_t symbolizer__loads(const struct symbolizer *s)
{
	return s ? __atomic_load_n(&s->loads, __ATOMIC_RELAXED) : 0;
}

void symbolizer__release_pages(struct symbolizer *s)
{
	for (struct sym_obj *o = s->lru.next; o != &s->lru; o = o->next)
		obj__release_pages(o);
}

void symbolizer__set_scratch_dir(const char *dir)
{
	obj__set_scratch_dir(dir);
}

const char *symbolizer__scratch_dir(void)
{
	return obj__scratch_dir();
}

uint64_t symbolizer__scratch_bytes(void)
{
	return obj__scratch_bytes();
}

void symbolizer__set_coarse(struct symbolizer *s, bool coarse)
{
	struct sym_obj *o, *older;

	if (s->coarse == coarse)
		return;
	s->coarse = coarse;
	/* Into coarse mode, the objects that loaded DWARF go: libdw keeps it
	 * (and its decompressed sections) as long as the object is cached.
	 * Out of it, those with symbol-only answers cached go, so that their
	 * lines and inlined frames come back.  Either way they are opened
	 * again when next asked about. */
	for (o = s->lru.prev; o != &s->lru; o = older) {
		older = o->prev;
		if (coarse ? o->dwarf_loaded : o->coarse)
			drop(s, o);
	}
}

bool symbolizer__coarse(const struct symbolizer *s)
{
	return s && s->coarse;
}

size_t symbolizer__max_objects(const struct symbolizer *s)
{
	return s ? s->max_objects : 0;
}

void symbolizer__debuginfod_stats(const struct symbolizer *s, struct debuginfod_stats *st)
{
	debuginfod__stats(s ? s->dbgd : NULL, st);
}
