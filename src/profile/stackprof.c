// SPDX-License-Identifier: BSD-2-Clause
/*
 * stackprof: raw stacks -> a symbolized pprof, in two halves: a snapshot of what the build
 * needs from the process table (the loop's), then the build (the contract: stackprof.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buildinfo.h"
#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/htab.h"
#include "pprof/pprof.h"
#include "proc/procs.h"
#include "proc/proctitle.h"
#include "proc/titles.h"
#include "profile/labels.h"
#include "profile/stackprof.h"
#include "symbolizer/symbolizer.h"

#define KERNEL_MAPPING_NAME "[kernel.kallsyms]"
#define MAX_LOCS (2 * 128)	/* kernel + user frames, one spliced leaf caller */

/*
 * (key1, key2) -> value.  Resolves every distinct frame and mapping once
 * per profile, however many stacks share it.  key1 is a proc_map the build
 * holds a reference to (or a static), so it cannot be freed and reused
 * while the memo lives.
 */
struct memo_entry {
	const void *k1;
	uint64_t k2;
	uint64_t val;
};

struct memo {
	struct memo_entry *v;
	size_t n, cap;
	struct htab index;
};

static uint32_t memo_hash(const void *k1, uint64_t k2)
{
	return hash__final(hash__u64(hash__u64(HASH_SEED, (uintptr_t)k1), k2));
}

static bool memo_eq(const void *ctx, size_t pos, const void *key)
{
	const struct memo *m = ctx;
	const struct memo_entry *k = key;

	return m->v[pos].k1 == k->k1 && m->v[pos].k2 == k->k2;
}

/* The value for (k1, k2) in *val; false if absent. */
static bool memo_get(const struct memo *m, const void *k1, uint64_t k2, uint64_t *val)
{
	struct memo_entry k = {k1, k2, 0};
	long pos = htab__find(&m->index, memo_hash(k1, k2), memo_eq, m, &k, NULL);

	if (pos < 0)
		return false;
	*val = m->v[pos].val;
	return true;
}

static int memo_put(struct memo *m, const void *k1, uint64_t k2, uint64_t val)
{
	struct memo_entry k = {k1, k2, val};
	struct htab_slot *slot;
	int err;

	err = htab__reserve(&m->index);
	err = err ?: array__grow(&m->v, &m->cap, m->n + 1, sizeof(*m->v));
	if (err)
		return err;
	if (htab__find(&m->index, memo_hash(k1, k2), memo_eq, m, &k, &slot) >= 0)
		return 0;
	m->v[m->n] = k;
	htab__set(&m->index, slot, memo_hash(k1, k2), m->n++);
	return 0;
}

static void memo_free(struct memo *m)
{
	free(m->v);
	htab__free(&m->index);
}

/*
 * What the stacks' processes had when their profile ended, by (pid, exec
 * sequence): all a build reads of the process table and the titles.
 */
struct snap_proc {
	uint32_t pid, seq;
	char *name;			/* the process's name, or NULL */
	struct proctitle title;		/* empty: no title labels */
	const struct proc_maps *maps;	/* held; NULL: unknown */
};

struct stackprof_snap {
	struct snap_proc *v;
	size_t n, cap;
	struct htab index;		/* (pid, seq) -> position in v */
	size_t truncated;		/* processes whose maps were cut at the limits */
};

static uint32_t snap_hash(uint32_t pid, uint32_t seq)
{
	return hash__final(hash__u64(HASH_SEED, (uint64_t)pid << 32 | seq));
}

static bool snap_eq(const void *ctx, size_t pos, const void *key)
{
	const struct stackprof_snap *s = ctx;
	const struct snap_proc *k = key;

	return s->v[pos].pid == k->pid && s->v[pos].seq == k->seq;
}

static const struct snap_proc *snap_find(const struct stackprof_snap *s, uint32_t pid,
					 uint32_t seq)
{
	struct snap_proc k = {.pid = pid, .seq = seq};
	long pos = htab__find(&s->index, snap_hash(pid, seq), snap_eq, s, &k, NULL);

	return pos < 0 ? NULL : &s->v[pos];
}

struct snap_walk {
	struct stackprof_snap *s;
	struct procs *procs;
	struct titles *titles;
	unsigned labels;
	int64_t now_ns;
};

static int snap_stack(const struct raw_stack *st, void *ctx)
{
	struct snap_walk *w = ctx;
	struct stackprof_snap *s = w->s;
	struct snap_proc k = {.pid = st->pid, .seq = st->exec_seq}, *e;
	struct htab_slot *slot;
	const struct proctitle *title = NULL;
	const char *name;
	int err;

	err = htab__reserve(&s->index);
	err = err ?: array__grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v));
	if (err)
		return err;
	if (htab__find(&s->index, snap_hash(k.pid, k.seq), snap_eq, s, &k, &slot) >= 0)
		return 0;
	name = procs__name(w->procs, st->pid);
	if (name && !(k.name = strdup(name)))
		return -ENOMEM;
	/* Rate-limited inside: one read per process per interval, not per stack. */
	if (w->titles && (w->labels & LABELS_TITLE))
		title = titles__get(w->titles, st->pid, w->now_ns);
	if (title)
		k.title = *title;
	/* Read when sampled: what /proc shows now may be another process that
	 * reused the pid.  Only stacks with user frames need the maps. */
	k.maps = proc_maps__get(procs__maps_known(w->procs, st->pid, st->exec_seq));
	if (k.maps && k.maps->truncated)
		s->truncated++;
	e = &s->v[s->n];
	*e = k;
	htab__set(&s->index, slot, snap_hash(k.pid, k.seq), s->n++);
	return 0;
}

int stackprof__snapshot(struct procs *procs, struct titles *titles, unsigned labels,
			raw_stack_iter iter, void *src, struct stackprof_snap **out)
{
	struct stackprof_snap *s = calloc(1, sizeof(*s));
	struct snap_walk w = {s, procs, titles, labels, clock__mono_ns()};
	int err;

	if (!s)
		return -ENOMEM;
	err = iter(src, snap_stack, &w);
	if (err) {
		stackprof__snap_free(s);
		return err < 0 ? err : -EIO;
	}
	*out = s;
	return 0;
}

struct stackprof_snap *stackprof__snap_new(void)
{
	return calloc(1, sizeof(struct stackprof_snap));
}

int stackprof__snap_add(struct stackprof_snap *s, uint32_t pid, uint32_t seq, const char *name,
			const struct proctitle *title, const struct proc_maps *maps)
{
	struct snap_proc k = {.pid = pid, .seq = seq};
	struct htab_slot *slot;
	int err;

	err = htab__reserve(&s->index);
	err = err ?: array__grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v));
	if (err)
		return err;
	if (htab__find(&s->index, snap_hash(pid, seq), snap_eq, s, &k, &slot) >= 0)
		return 0;
	if (name && !(k.name = strdup(name)))
		return -ENOMEM;
	if (title)
		k.title = *title;
	k.maps = proc_maps__get(maps);
	if (k.maps && k.maps->truncated)
		s->truncated++;
	s->v[s->n] = k;
	htab__set(&s->index, slot, snap_hash(pid, seq), s->n++);
	return 0;
}

void stackprof__snap_free(struct stackprof_snap *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		proc_maps__put(s->v[i].maps);
	}
	free(s->v);
	htab__free(&s->index);
	free(s);
}

struct build {
	struct symbolizer *sym;
	const struct stackprof_snap *snap;
	struct pprof *p;
	struct stackprof_result *res;
	unsigned labels;
	uint64_t kernel_mapping;
	/* Keyed by proc_map pointers into maps the snapshot holds, so none
	 * can be freed and reused while the memos live. */
	struct memo locs;	/* (proc_map* or &kernel_key, address) -> location id */
	struct memo mappings;	/* (proc_map*, 0) -> pprof mapping id (0: unusable) */
	/* Files no process could be found to open them through (lent). */
	struct file_id {
		uint64_t dev, ino;
	} *unlent;
	size_t nunlent, unlent_cap;
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
		fn = pprof__function(b->p, f->function, f->system_name ?: f->function, f->file, 0);
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
	struct sym_result r = {};
	uint64_t id;

	if (memo_get(&b->locs, &kernel_key, addr, &id))
		return id;
	if (!b->kernel_mapping) {
		struct pprof_mapping km = {.file = KERNEL_MAPPING_NAME, .has_functions = true};

		/* Without kallsyms (no privilege) the mapping still names the frames' origin. */
		symbolizer__kernel_range(b->sym, &km.start, &km.limit);
		b->kernel_mapping = pprof__mapping(b->p, &km);
	}
	symbolizer__resolve_kernel(b->sym, addr, &r);
	id = lines_location(b, b->kernel_mapping, addr, &r);
	if (id && memo_put(&b->locs, &kernel_key, addr, id))
		return 0;
	return id;
}

static struct sym_object_key obj_key(const struct proc_map *m, int pid)
{
	return (struct sym_object_key){m->path, m->dev, m->ino, pid, m->start, m->end};
}

/*
 * pid's file could not be opened: pid has exited, so its map_files are
 * gone, and the path may name another inode (overlayfs, as in containers,
 * reports one for the path and another for the mapping).  Another process
 * of the snapshot that maps the same file and is still alive can lend its
 * mapping: once the object is cached by its identity, pid's lookups find it
 * there.  Tried once per file and build.
 */
static bool lend(struct build *b, const struct proc_map *m, int pid)
{
	struct sym_object_info info;

	for (size_t i = 0; i < b->nunlent; i++)
		if (b->unlent[i].dev == m->dev && b->unlent[i].ino == m->ino)
			return false;
	for (size_t i = 0; i < b->snap->n; i++) {
		const struct snap_proc *sp = &b->snap->v[i];

		for (size_t j = 0; sp->pid != (uint32_t)pid && sp->maps && j < sp->maps->n; j++) {
			const struct proc_map *o = &sp->maps->m[j];
			struct sym_object_key key = obj_key(o, sp->pid);

			if (o->dev != m->dev || o->ino != m->ino || o->replaced)
				continue;
			if (symbolizer__object_info(b->sym, &key, &info) == 0)
				return true;
			break;	/* this process is no better off */
		}
	}
	if (!array__grow(&b->unlent, &b->unlent_cap, b->nunlent + 1, sizeof(*b->unlent)))
		b->unlent[b->nunlent++] = (struct file_id){m->dev, m->ino};
	return false;
}

static uint64_t mapping_id(struct build *b, const struct proc_map *m, int pid)
{
	struct sym_object_key key = obj_key(m, pid);
	struct sym_object_info info = {};
	struct pprof_mapping pm = {
		.start = m->start, .limit = m->end, .offset = m->offset, .file = m->path,
	};
	uint64_t id;

	if (memo_get(&b->mappings, m, 0, &id))
		return id;
	if (symbolizer__object_info(b->sym, &key, &info) == 0 ||
	    (lend(b, m, pid) && symbolizer__object_info(b->sym, &key, &info) == 0)) {
		pm.build_id = info.build_id;
		pm.has_functions = info.has_functions;
		pm.has_filenames = info.has_filenames;
		pm.has_line_numbers = info.has_line_numbers;
		pm.has_inline_frames = info.has_inline_frames;
	}
	id = pprof__mapping(b->p, &pm);
	if (memo_put(&b->mappings, m, 0, id))
		return 0;
	return id;
}

/*
 * Frames above the leaf hold return addresses, which point after the call;
 * look up addr - 1 so the line is the call's, as perf and pprof do.
 */
static uint64_t user_location(struct build *b, const struct proc_maps *pm, int pid,
			      uint64_t addr, bool leaf, bool *symbolized)
{
	const struct proc_map *m = proc_maps__find(pm, addr);
	struct sym_result r = {};
	struct sym_object_key key;
	uint64_t mid, id, lookup = leaf ? addr : addr - 1;

	*symbolized = false;
	/* A replaced mapping's addresses may be the other file's: no name
	 * rather than a wrong one. */
	if (!m || m->replaced)
		return pprof__location(b->p, 0, addr, NULL, 0);
	if (memo_get(&b->locs, m, addr, &id)) {
		*symbolized = id >> 63;
		return id & ~(1ull << 63);
	}
	mid = mapping_id(b, m, pid);
	key = obj_key(m, pid);
	if (symbolizer__resolve(b->sym, &key, lookup - m->start + m->offset, &r) < 0)
		r.nframes = 0;
	/* Nothing at all before a return address, not even an FDE: a return
	 * into a signal trampoline that has no CFI, whose first byte the
	 * kernel put in the link register (arm64's vDSO __kernel_rt_sigreturn,
	 * after a nop no symbol covers).  The address itself names it. */
	if (!leaf && !(r.nframes && r.frames[r.nframes - 1].function) &&
	    symbolizer__resolve(b->sym, &key, addr - m->start + m->offset, &r) < 0)
		r.nframes = 0;
	*symbolized = r.nframes > 0 && r.frames[r.nframes - 1].function;
	id = lines_location(b, mid, addr, &r);
	/* The top bit remembers whether it was symbolized; ids never get that big. */
	if (!id || memo_put(&b->locs, m, addr, id | (uint64_t)*symbolized << 63))
		return 0;
	return id;
}

static int add_stack(const struct raw_stack *st, void *ctx)
{
	struct build *b = ctx;
	uint64_t locs[MAX_LOCS + 1];
	const struct snap_proc *sp = snap_find(b->snap, st->pid, st->exec_seq);
	const struct proc_maps *pm = sp ? sp->maps : NULL;
	const char *pcomm = st->pcomm;
	const struct proctitle *title = sp ? &sp->title : NULL;
	char pname[PROCTITLE_LABEL_MAX], tname[PROCTITLE_LABEL_MAX], pid[12], tid[12];
	struct pprof_label labels[9];
	size_t n = 0, nl = 0;

	if (!pcomm && sp)
		pcomm = sp->name;
	if (!pcomm)
		pcomm = st->comm;
	/* pid and tid are string labels: Pyroscope makes series of string
	 * labels only (pprofsplit skips numeric ones). */
	if (b->labels & LABEL_PID) {
		snprintf(pid, sizeof(pid), "%u", (unsigned)st->pid);
		labels[nl++] = (struct pprof_label){.key = "pid", .str = pid};
	}
	if (st->tid && (b->labels & LABEL_TID)) {
		snprintf(tid, sizeof(tid), "%u", (unsigned)st->tid);
		labels[nl++] = (struct pprof_label){.key = "tid", .str = tid};
	}
	/* Names a process gives itself: any bytes, bounded here; the string
	 * table escapes what is not printable UTF-8 (pprof/utf8.h), as it does
	 * file and function names. */
	if (st->tid && st->comm && (b->labels & LABEL_THREAD_NAME)) {
		snprintf(tname, sizeof(tname), "%s", st->comm);
		labels[nl++] = (struct pprof_label){.key = "thread_name", .str = tname};
	}
	if (pcomm && (b->labels & LABEL_PROCESS_NAME)) {
		snprintf(pname, sizeof(pname), "%s", pcomm);
		labels[nl++] = (struct pprof_label){.key = "process_name", .str = pname};
	}
	if (title && title->backend_type[0] && (b->labels & LABEL_BACKEND_TYPE))
		labels[nl++] = (struct pprof_label){.key = "backend_type",
						    .str = title->backend_type};
	if (title && title->database[0] && (b->labels & LABEL_DATABASE))
		labels[nl++] = (struct pprof_label){.key = "database", .str = title->database};
	if (title && title->user[0] && (b->labels & LABEL_USER))
		labels[nl++] = (struct pprof_label){.key = "user", .str = title->user};
	/* Bounded by PostgreSQL's events (its source's), not by processes. */
	if (st->wait_event)
		labels[nl++] = (struct pprof_label){.key = "wait_event", .str = st->wait_event};
	if (st->state)
		labels[nl++] = (struct pprof_label){.key = "state", .str = st->state};
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
	/*
	 * No mappings for the program the process ran when sampled: it exec'd
	 * again before they could be read (or it was evicted).  Its addresses
	 * mean nothing without them, and another generation's would name the
	 * wrong code, so the user stack is one frame named after the process,
	 * as the kernel named it at exec: "[name]".
	 */
	if (!pm && st->nu > 0 && n < MAX_LOCS) {
		char fname[PROCTITLE_LABEL_MAX + 2];
		struct pprof_line line;

		proctitle__sanitize(fname + 1, pcomm ? pcomm : "", PROCTITLE_LABEL_MAX - 1);
		fname[0] = '[';
		strcat(fname, "]");
		line = (struct pprof_line){pprof__function(b->p, fname, fname, NULL, 0), 0};
		locs[n] = line.function_id ? pprof__location(b->p, 0, 0, &line, 1) : 0;
		if (!locs[n])
			return -ENOMEM;
		n++;
		b->res->unmapped += st->values[0];
		b->res->samples += st->values[0];
		return pprof__add_sample(b->p, locs, n, st->values, labels, nl);
	}
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
		locs[n] = user_location(b, pm, st->pid, st->uframes[i], i == 0 && !st->leaf_function,
				        &ok);
		if (!locs[n])
			return -ENOMEM;
		n++;
		b->res->user_frames += st->values[0];
		b->res->user_frames_symbolized += ok ? st->values[0] : 0;
	}
	b->res->samples += st->values[0];
	return pprof__add_sample(b->p, locs, n, st->values, labels, nl);
}

int stackprof__build(struct symbolizer *sym, const struct stackprof_snap *snap,
		     const struct stackprof_meta *meta, raw_stack_iter iter, void *src,
		     struct pprof **out, struct stackprof_result *res)
{
	struct stackprof_result dummy;
	struct build b = {.sym = sym, .snap = snap, .res = res ? res : &dummy,
			  .labels = meta->labels};
	char comment[600];	/* the build line is up to 512 */
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
	/* After the caller's: the first comment is the profile's title (the SVG's subtitle). */
	snprintf(comment, sizeof(comment), "profd: %s", buildinfo__line());
	err = err ?: pprof__add_comment(b.p, comment);
	err = err ?: iter(src, add_stack, &b);
	snprintf(comment, sizeof(comment),
		 "profd: user stacks cut where the frame-pointer chain left executable code: "
		 "%" PRIu64 " samples", b.res->truncated);
	err = err ?: pprof__add_comment(b.p, comment);
	if (!err && b.res->unmapped) {
		snprintf(comment, sizeof(comment),
			 "profd: %" PRIu64 " samples of programs whose memory maps could not be read "
			 "(the process exec'd again first): their user stacks are one frame, [name]",
			 b.res->unmapped);
		err = pprof__add_comment(b.p, comment);
	}
	if (!err && snap->truncated) {
		snprintf(comment, sizeof(comment),
			 "profd: memory maps cut at the limits (max_maps_bytes, max_maps_entries) "
			 "for %zu processes: frames outside what was read are unsymbolized",
			 snap->truncated);
		err = pprof__add_comment(b.p, comment);
	}
	memo_free(&b.locs);
	memo_free(&b.mappings);
	free(b.unlent);
	/* Between profiles, what the lookups read of the files need not stay
	 * in the daemon's RSS: the names are the profile's own copies now.
	 * The objects this profile used may be evicted from now on. */
	symbolizer__end_batch(sym);
	if (err) {
		pprof__free(b.p);
		return err < 0 ? err : -EIO;
	}
	*out = b.p;
	return 0;
}
