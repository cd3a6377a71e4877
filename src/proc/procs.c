// SPDX-License-Identifier: BSD-2-Clause
/* procs: per process: mappings (by exec generation), executable, name (the contract: procs.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/htab.h"
#include "lib/log.h"
#include "proc/procs.h"

#define REFRESH_NS 1000000000ll
/* A maps file cut at the limits is no more complete when read again:
 * reading 4 MiB of it costs tens of ms, so a process whose samples keep
 * missing its (cut) mappings is read again at most this often. */
#define REFRESH_TRUNCATED_NS 30000000000ll

struct proc_entry {
	int pid;
	bool exited;
	bool truncated_logged;	/* the log said its maps were cut */
	bool provisional;	/* read right after exec, before ld.so mapped the libraries */
	int exe_err;		/* 0: exe known or not tried; negative errno: unreadable */
	bool exe_known;
	uint64_t used;		/* LRU clock */
	int64_t taken_ns;	/* CLOCK_MONOTONIC of the last maps read */
	int64_t exited_ns;	/* CLOCK_MONOTONIC of its exit, when exited */
	struct proc_maps *maps;	/* generation seq */
	struct proc_maps *prev;	/* generation prev_seq, before the last exec */
	uint32_t seq, prev_seq;
	/* seq is the generation the kernel counted when maps was read, not
	 * only the one asked for: a sample of any other generation (but prev's)
	 * has no mappings here, rather than another program's. */
	bool seq_exact;
	uint64_t exe_dev, exe_ino;
	char *exe_path;		/* malloc'd */
	char name[PROCS_NAME_LEN];
};

struct procs {
	struct proc_entry *v;	/* entries, in no order */
	size_t n, cap, max;
	size_t maps_bytes, maps_entries;	/* what one maps read may take */
	struct htab index;	/* pid -> position in v */
	uint64_t clock;
	uint64_t evictions;
	uint64_t truncated;
	uint64_t maps_reads;
	uint64_t overtaken;	/* reads not kept: the process exec'd again meanwhile */
	procs_seq_fn seq_fn;	/* the kernel's exec count of a process, or NULL */
	void *seq_ctx;
};

struct proc_maps *proc_maps__get(const struct proc_maps *pm)
{
	struct proc_maps *m = (struct proc_maps *)pm;

	/* Atomic: a profile being built on another thread holds maps too. */
	if (m)
		__atomic_add_fetch(&m->refcnt, 1, __ATOMIC_RELAXED);
	return m;
}

void proc_maps__put(const struct proc_maps *cpm)
{
	struct proc_maps *pm = (struct proc_maps *)cpm;

	if (!pm || __atomic_sub_fetch(&pm->refcnt, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	for (size_t i = 0; i < pm->n; i++)
		free(pm->m[i].path);
	free(pm->m);
	free(pm);
}

static int map_cmp(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/*
 * Only executable, file-backed mappings matter to a profile: samples land
 * in text.  Anonymous executable memory (JITs) has no file to read.
 */
int proc_maps__parse(const char *text, size_t len, size_t max_entries, struct proc_maps **out)
{
	const char *line = text, *end = text + len;
	struct proc_maps *pm;
	size_t cap = 0;
	int err = 0;

	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	pm->refcnt = 1;
	while (line < end) {
		const char *nl = memchr(line, '\n', end - line);
		size_t llen = (nl ? nl : end) - line;
		unsigned long long start, stop, off, ino;
		unsigned int maj, min;
		char buf[160], perms[8];
		int pathpos = 0;
		struct proc_map *m;

		/* The fixed fields fit in 160 bytes; the path is taken from line. */
		memcpy(buf, line, llen < sizeof(buf) - 1 ? llen : sizeof(buf) - 1);
		buf[llen < sizeof(buf) - 1 ? llen : sizeof(buf) - 1] = '\0';
		if (sscanf(buf, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &stop, perms, &off, &maj,
			   &min, &ino, &pathpos) < 7 || perms[2] != 'x' || pathpos <= 0 ||
		    (size_t)pathpos >= llen || stop <= start)
			goto next;
		/* Files, and the vDSO (clock_gettime & co.): the kernel prints
		 * file paths absolute, so no file can pose as "[vdso]". */
		if (line[pathpos] != '/' &&
		    !(llen - pathpos == strlen(PROC_MAP_VDSO) &&
		      !memcmp(line + pathpos, PROC_MAP_VDSO, llen - pathpos)))
			goto next;
		if (pm->n == max_entries) {
			pm->truncated = true;
			break;
		}
		err = array__grow(&pm->m, &cap, pm->n + 1, sizeof(*pm->m));
		if (err)
			goto cleanup;
		m = &pm->m[pm->n];
		m->path = strndup(line + pathpos, llen - pathpos);
		if (!m->path) {
			err = -ENOMEM;
			goto cleanup;
		}
		m->start = start;
		m->end = stop;
		m->offset = off;
		m->dev = makedev(maj, min);
		m->ino = ino;
		m->replaced = false;
		pm->n++;
next:
		if (!nl)
			break;
		line = nl + 1;
	}
	if (pm->n)	/* pm->m is NULL then, which qsort must not be given */
		qsort(pm->m, pm->n, sizeof(*pm->m), map_cmp);
	*out = pm;
	return 0;
cleanup:
	proc_maps__put(pm);
	return err;
}

/* Same file at the same load bias: the same text, wherever it overlaps. */
static bool same_text(const struct proc_map *a, const struct proc_map *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->start - a->offset == b->start - b->offset &&
	       strcmp(a->path, b->path) == 0;
}

/* The first of n mappings (sorted, not overlapping) that ends after addr. */
static size_t first_ending_after(const struct proc_map *m, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int proc_maps__merge(const struct proc_maps *old, struct proc_maps *pm, size_t max_entries)
{
	size_t n = pm->n, cap = pm->n;
	int err = 0;

	for (size_t i = 0; old && i < old->n; i++) {
		const struct proc_map *o = &old->m[i];
		bool covered = false;

		/* pm's first n entries are the new read, sorted. */
		for (size_t j = first_ending_after(pm->m, n, o->start);
		     j < n && pm->m[j].start < o->end; j++) {
			covered = true;
			if (!same_text(o, &pm->m[j]) || o->replaced)
				pm->m[j].replaced = true;
		}
		if (covered || pm->n >= max_entries)
			continue;
		err = array__grow(&pm->m, &cap, pm->n + 1, sizeof(*pm->m));
		if (err)
			break;
		pm->m[pm->n] = *o;
		pm->m[pm->n].path = strdup(o->path);
		if (!pm->m[pm->n].path) {
			err = -ENOMEM;
			break;
		}
		pm->n++;
	}
	if (pm->n > n)
		qsort(pm->m, pm->n, sizeof(*pm->m), map_cmp);
	return err;
}

/* Read at most max bytes of a /proc file; *truncated when there was more. */
static int read_proc(int pid, const char *what, size_t max, char **out, size_t *len, bool *truncated)
{
	char path[64], *buf = NULL;
	size_t n = 0, cap = 0;
	ssize_t r;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*truncated = false;
	for (;;) {
		if (n == max) {
			*truncated = true;
			break;
		}
		if (cap - n < 4096) {
			err = array__grow(&buf, &cap, n + 16384 > max ? max + 1 : n + 16384, 1);
			if (err)
				goto cleanup;
		}
		r = read(fd, buf + n, (cap - 1 - n) < max - n ? cap - 1 - n : max - n);
		if (r < 0) {
			err = -errno;
			goto cleanup;
		}
		if (r == 0)
			break;
		n += r;
	}
	*out = buf;
	*len = n;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return err;
}

static int read_maps(struct procs *ps, int pid, struct proc_maps **out)
{
	bool truncated;
	char *text = NULL;
	size_t len = 0;
	int err;

	ps->maps_reads++;
	err = read_proc(pid, "maps", ps->maps_bytes, &text, &len, &truncated);
	if (err)
		return err;
	/* A zombie or a kernel thread has no maps: that is "gone" to us. */
	if (len == 0) {
		free(text);
		return -ESRCH;
	}
	if (truncated)	/* drop the partial last line */
		while (len && text[len - 1] != '\n')
			len--;
	err = proc_maps__parse(text, len, ps->maps_entries, out);
	free(text);
	if (!err && truncated)
		(*out)->truncated = true;
	if (!err && (*out)->truncated)
		ps->truncated++;
	return err;
}

static void evict_one(struct procs *ps);

struct procs *procs__new(size_t max)
{
	struct procs *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	procs__set_limits(ps, max, 0, 0);
	return ps;
}

void procs__set_limits(struct procs *ps, size_t max, size_t maps_bytes, size_t maps_entries)
{
	ps->max = max ? max : PROCS_DEFAULT_MAX;
	ps->maps_bytes = maps_bytes ? maps_bytes : PROCS_MAPS_MAX_BYTES;
	ps->maps_entries = maps_entries ? maps_entries : PROCS_MAPS_MAX_ENTRIES;
	while (ps->n > ps->max)
		evict_one(ps);
}

static void entry_clear(struct proc_entry *e)
{
	proc_maps__put(e->maps);
	proc_maps__put(e->prev);
	free(e->exe_path);
}

void procs__free(struct procs *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->n; i++)
		entry_clear(&ps->v[i]);
	free(ps->v);
	htab__free(&ps->index);
	free(ps);
}

static bool pid_eq(const void *ctx, size_t pos, const void *key)
{
	const struct procs *ps = ctx;

	return ps->v[pos].pid == *(const int *)key;
}

static struct proc_entry *lookup(struct procs *ps, int pid)
{
	long pos = htab__find(&ps->index, hash__pid(pid), pid_eq, ps, &pid, NULL);

	return pos < 0 ? NULL : &ps->v[pos];
}

static void remove_entry(struct procs *ps, struct proc_entry *e)
{
	size_t pos = e - ps->v, last = ps->n - 1;

	htab__remove(&ps->index, hash__pid(e->pid), pos);
	entry_clear(e);
	if (pos != last) {
		ps->v[pos] = ps->v[last];
		htab__move(&ps->index, hash__pid(ps->v[pos].pid), last, pos);
	}
	ps->n--;
}

/* Exited processes first, then the least recently used.  O(n), but only
 * when full; entries are added at process-creation rate. */
static void evict_one(struct procs *ps)
{
	struct proc_entry *victim = NULL;

	for (size_t i = 0; i < ps->n; i++) {
		struct proc_entry *e = &ps->v[i];

		if (!victim || (e->exited && !victim->exited) ||
		    (e->exited == victim->exited && e->used < victim->used))
			victim = e;
	}
	if (victim) {
		remove_entry(ps, victim);
		ps->evictions++;
	}
}

/* pid's entry, created empty if needed.  NULL only without memory. */
static struct proc_entry *entry_of(struct procs *ps, int pid)
{
	struct htab_slot *slot;
	struct proc_entry *e;
	long pos;

	pos = htab__find(&ps->index, hash__pid(pid), pid_eq, ps, &pid, NULL);
	if (pos >= 0)
		return &ps->v[pos];
	if (ps->n >= ps->max)
		evict_one(ps);
	if (htab__reserve(&ps->index) ||
	    array__grow(&ps->v, &ps->cap, ps->n + 1, sizeof(*ps->v)))
		return NULL;
	htab__find(&ps->index, hash__pid(pid), pid_eq, ps, &pid, &slot);
	e = &ps->v[ps->n];
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	htab__set(&ps->index, slot, hash__pid(pid), ps->n++);
	return e;
}

static void read_name(struct proc_entry *e)
{
	char *text = NULL;
	size_t len = 0;
	bool truncated;

	if (read_proc(e->pid, "comm", PROCS_NAME_LEN, &text, &len, &truncated))
		return;
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\0'))
		len--;
	if (len) {
		memcpy(e->name, text, len < PROCS_NAME_LEN - 1 ? len : PROCS_NAME_LEN - 1);
		e->name[len < PROCS_NAME_LEN - 1 ? len : PROCS_NAME_LEN - 1] = '\0';
	}
	free(text);
}

/* The executable through /proc/PID/exe: the identity and path the process
 * itself sees, which also holds inside containers and on overlayfs. */
static int read_exe(struct proc_entry *e)
{
	char link[64], path[4096];
	struct stat st;
	ssize_t len;
	char *del;

	snprintf(link, sizeof(link), "/proc/%d/exe", e->pid);
	len = readlink(link, path, sizeof(path) - 1);
	if (len <= 0 || stat(link, &st))
		return -errno ?: -ESRCH;
	path[len] = '\0';
	del = strstr(path, " (deleted)");
	if (del && !del[10])
		*del = '\0';
	free(e->exe_path);
	e->exe_path = strdup(path);
	if (!e->exe_path)
		return -ENOMEM;
	e->exe_dev = st.st_dev;
	e->exe_ino = st.st_ino;
	e->exe_known = true;
	return 0;
}

static void copy_exe(struct proc_entry *dst, const struct proc_entry *src)
{
	if (!src->exe_known)
		return;
	free(dst->exe_path);
	dst->exe_path = strdup(src->exe_path);
	dst->exe_known = dst->exe_path != NULL;
	dst->exe_dev = src->exe_dev;
	dst->exe_ino = src->exe_ino;
}

/* pm becomes e's generation seq: a newer one pushes the current back.
 * exact: seq is what the kernel counted (see struct proc_entry). */
static void set_maps(struct proc_entry *e, struct proc_maps *pm, uint32_t seq, bool exact)
{
	if (e->maps && seq != PROCS_SEQ_LATEST && seq != e->seq) {
		proc_maps__put(e->prev);
		e->prev = e->maps;
		e->prev_seq = e->seq;
	} else {
		proc_maps__put(e->maps);
	}
	e->maps = pm;
	if (seq != PROCS_SEQ_LATEST)
		e->seq = seq;
	e->seq_exact = exact && seq != PROCS_SEQ_LATEST;
}

/* The generation that pid's maps come from, as the kernel counts it:
 * PROCS_SEQ_LATEST when nobody can tell. */
static uint32_t kernel_seq(const struct procs *ps, int pid)
{
	return ps->seq_fn ? ps->seq_fn(ps->seq_ctx, pid) : PROCS_SEQ_LATEST;
}

/* e's mappings for generation seq, or NULL: once e's generation is known
 * exactly, a sample of a generation it does not hold has no mappings. */
static const struct proc_maps *pick(const struct proc_entry *e, uint32_t seq)
{
	if (seq == PROCS_SEQ_LATEST || seq == e->seq)
		return e->maps;
	if (seq == e->prev_seq && e->prev)
		return e->prev;
	return e->seq_exact ? NULL : e->maps;
}

/* pid was just forked from ppid: its text is its parent's, whatever it has
 * done since (it may have exec'd by the time this runs). */
static int inherit(struct procs *ps, int pid, int ppid, const char *comm, uint32_t seq)
{
	struct proc_entry *e, *parent = lookup(ps, ppid);

	/* A parent read right after its exec lacks its libraries: now it has them. */
	if (!parent || !parent->maps || parent->provisional) {
		/* A failed read keeps what there was: the entry may still have maps. */
		procs__snapshot(ps, ppid, 0, NULL, PROCS_SEQ_LATEST);
		parent = lookup(ps, ppid);
		if (!parent || !parent->maps)
			return -ESRCH;
	}
	/* Just used: not the one evicted to make room for its child. */
	parent->used = ++ps->clock;
	e = entry_of(ps, pid);
	/* entry_of may have moved or evicted the parent. */
	parent = lookup(ps, ppid);
	if (!e || !parent || !parent->maps)
		return -ENOMEM;
	/* At fork the child is in its parent's program: the event's count is
	 * the kernel's, for exactly these mappings. */
	set_maps(e, proc_maps__get(parent->maps), seq, true);
	copy_exe(e, parent);
	memcpy(e->name, parent->name, sizeof(e->name));
	if (comm)
		snprintf(e->name, sizeof(e->name), "%.15s", comm);
	e->exited = false;
	e->used = ++ps->clock;
	/* Read on its own later, when it is sampled outside what it inherited. */
	e->taken_ns = 0;
	return 0;
}

int procs__snapshot(struct procs *ps, int pid, int ppid, const char *comm, uint32_t seq)
{
	struct proc_maps *pm = NULL;
	struct proc_entry *e;
	uint32_t before, after;
	int err;

	if (pid <= 0)
		return -EINVAL;
	if (ppid > 0)
		return inherit(ps, pid, ppid, comm, seq);
	/*
	 * A process that execs again before its maps are read (one that
	 * re-execs itself every millisecond) shows /proc a later program.
	 * The kernel's count, before and after the read, says which one was
	 * read: a read of another generation than asked, or across an exec,
	 * is not kept, and that generation's samples go without mappings
	 * rather than with another program's.  (The count moves at the exec
	 * tracepoint, a little after the new mappings appear: a read in that
	 * window can still take the next program's first mappings.)
	 *
	 * The generation it is in now is read instead, once: its samples are
	 * in the ring already or still to come, and a chain of execs (sh
	 * execing ls) reads each program it stays in, not each it passed.
	 */
	before = kernel_seq(ps, pid);
	if (before != PROCS_SEQ_LATEST && seq != PROCS_SEQ_LATEST && before != seq) {
		e = lookup(ps, pid);
		ps->overtaken++;
		/* Older than the event (a reused pid's count): nothing to read. */
		if ((int32_t)(before - seq) < 0 ||
		    (e && e->maps && e->seq_exact && e->seq == before))
			return -ESTALE;
	}
	err = read_maps(ps, pid, &pm);
	if (err)
		return err;
	after = kernel_seq(ps, pid);
	if (before != after) {
		ps->overtaken++;
		proc_maps__put(pm);
		return -ESTALE;
	}
	if (after != PROCS_SEQ_LATEST)
		seq = after;
	e = entry_of(ps, pid);
	if (!e) {
		proc_maps__put(pm);
		return -ENOMEM;
	}
	/* A re-read of the generation held: what was unmapped since may still
	 * be in samples taken before. */
	if (e->maps && e->seq_exact && after != PROCS_SEQ_LATEST && e->seq == seq)
		proc_maps__merge(e->maps, pm, ps->maps_entries);
	set_maps(e, pm, seq, after != PROCS_SEQ_LATEST);
	e->exited = false;
	e->provisional = false;
	if (pm->truncated && !e->truncated_logged) {
		e->truncated_logged = true;
		log__warn("process %d: memory maps cut at %zu bytes or %zu executable mappings "
			  "(max_maps_bytes, max_maps_entries); samples outside them are unsymbolized",
			  pid, ps->maps_bytes, ps->maps_entries);
	}
	e->used = ++ps->clock;
	e->taken_ns = clock__mono_ns();
	e->exe_err = read_exe(e);
	read_name(e);
	if (!e->name[0] && comm)
		snprintf(e->name, sizeof(e->name), "%.15s", comm);
	return 0;
}

const struct proc_maps *procs__maps(struct procs *ps, int pid, uint32_t seq)
{
	struct proc_entry *e = lookup(ps, pid);

	/* Unknown, or a later generation than the one held: read now, which
	 * gives that generation only if the process is still in it. */
	if (!e || !e->maps ||
	    (e->seq_exact && seq != PROCS_SEQ_LATEST && seq > e->seq && !e->exited)) {
		if (procs__snapshot(ps, pid, 0, NULL, seq) && (!e || !e->maps))
			return NULL;
		e = lookup(ps, pid);
		if (!e || !e->maps)
			return NULL;
	}
	e->used = ++ps->clock;
	return pick(e, seq);
}

const struct proc_maps *procs__maps_for(struct procs *ps, int pid, uint32_t seq, uint64_t addr)
{
	const struct proc_maps *pm = procs__maps(ps, pid, seq);
	struct proc_entry *e;
	int64_t now;

	if (!pm || proc_maps__find(pm, addr))
		return pm;
	e = lookup(ps, pid);
	now = clock__mono_ns();
	/* Only the current generation can have grown since it was read. */
	if (e->exited || pm != e->maps ||
	    (!e->provisional &&
	     now - e->taken_ns < (pm->truncated ? REFRESH_TRUNCATED_NS : REFRESH_NS)))
		return pm;
	e->taken_ns = now;	/* rate-limits failures too */
	if (procs__snapshot(ps, pid, 0, NULL, e->seq))
		return pm;
	return procs__maps(ps, pid, seq);
}

int procs__exe(struct procs *ps, int pid, struct proc_exe *out)
{
	struct proc_entry *e = lookup(ps, pid);
	const char *slash;

	if (!e || (!e->exe_known && !e->exited)) {
		if (!e) {
			int err = procs__snapshot(ps, pid, 0, NULL, PROCS_SEQ_LATEST);

			if (err)
				return err;
			e = lookup(ps, pid);
		} else {
			e->exe_err = read_exe(e);
		}
	}
	if (!e || !e->exe_known)
		return e && e->exe_err ? e->exe_err : -ESRCH;
	out->dev = e->exe_dev;
	out->ino = e->exe_ino;
	out->path = e->exe_path;
	slash = strrchr(e->exe_path, '/');
	out->name = slash ? slash + 1 : e->exe_path;
	return 0;
}

void procs__set_seq_source(struct procs *ps, procs_seq_fn fn, void *ctx)
{
	ps->seq_fn = fn;
	ps->seq_ctx = ctx;
}

void procs__provisional(struct procs *ps, int pid)
{
	struct proc_entry *e = lookup(ps, pid);

	if (e)
		e->provisional = true;
}

const char *procs__name(struct procs *ps, int pid)
{
	struct proc_entry *e = lookup(ps, pid);

	return e && e->name[0] ? e->name : NULL;
}

void procs__exited(struct procs *ps, int pid)
{
	struct proc_entry *e = lookup(ps, pid);

	if (e && !e->exited) {
		e->exited = true;
		e->exited_ns = clock__mono_ns();
	}
}

void procs__expire(struct procs *ps, int64_t before_ns)
{
	for (size_t i = 0; i < ps->n;) {
		struct proc_entry *e = &ps->v[i];

		if (e->exited && e->exited_ns < before_ns)
			remove_entry(ps, e);	/* moves the last entry to i */
		else
			i++;
	}
}

const struct proc_maps *procs__maps_known(struct procs *ps, int pid, uint32_t seq)
{
	struct proc_entry *e = lookup(ps, pid);

	if (!e || !e->maps)
		return NULL;
	e->used = ++ps->clock;
	return pick(e, seq);
}

const struct proc_map *proc_maps__find(const struct proc_maps *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm ? pm->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < pm->m[mid].start)
			hi = mid;
		else if (addr >= pm->m[mid].end)
			lo = mid + 1;
		else
			return &pm->m[mid];
	}
	return NULL;
}

void procs__stats(const struct procs *ps, struct procs_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->processes = ps->n;
	st->max = ps->max;
	st->evictions = ps->evictions;
	st->truncated = ps->truncated;
	st->maps_reads = ps->maps_reads;
	st->overtaken = ps->overtaken;
	for (size_t i = 0; i < ps->n; i++) {
		const struct proc_maps *pm = ps->v[i].maps;

		st->exited += ps->v[i].exited;
		/* Shared snapshots count once, for their first holder. */
		if (pm && pm->refcnt == 1)
			st->maps_bytes += sizeof(*pm) + pm->n * (sizeof(pm->m[0]) + 48);
	}
	st->maps_bytes += ps->cap * sizeof(*ps->v) + htab__bytes(&ps->index);
}
