// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "procs.h"

#define REFRESH_NS 1000000000ll

struct proc_entry {
	int pid;		/* 0: empty slot */
	uint64_t used;		/* LRU clock */
	int64_t taken_ns;	/* CLOCK_MONOTONIC of the last read */
	struct proc_maps *maps;
};

struct procs {
	struct proc_entry *tab;	/* open addressing, linear probing, cap = 2 * max */
	size_t cap;
	size_t max;
	size_t n;
	uint64_t clock;
};

void proc_maps__put(struct proc_maps *pm)
{
	if (!pm || --pm->refcnt > 0)
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
 * Only executable, file-backed mappings matter to a CPU profile: samples
 * land in text.  Anonymous executable memory (JITs) has no file to read.
 */
int proc_maps__parse(const char *text, struct proc_maps **out)
{
	struct proc_maps *pm;
	const char *line = text;
	size_t cap = 16;
	int err = 0;

	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	pm->refcnt = 1;
	pm->m = calloc(cap, sizeof(*pm->m));
	if (!pm->m) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		unsigned long long start, end, off, ino;
		unsigned int maj, min;
		char perms[8];
		int pathpos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off,
			   &maj, &min, &ino, &pathpos) >= 7 &&
		    perms[2] == 'x' && pathpos > 0 && line[pathpos] == '/') {
			size_t plen = (nl ? (size_t)(nl - line) : strlen(line)) - pathpos;
			struct proc_map *m;

			if (pm->n == cap) {
				struct proc_map *nm = realloc(pm->m, 2 * cap * sizeof(*nm));

				if (!nm) {
					err = -ENOMEM;
					goto cleanup;
				}
				pm->m = nm;
				cap *= 2;
			}
			m = &pm->m[pm->n];
			m->path = strndup(line + pathpos, plen);
			if (!m->path) {
				err = -ENOMEM;
				goto cleanup;
			}
			m->start = start;
			m->end = end;
			m->offset = off;
			m->dev = makedev(maj, min);
			m->ino = ino;
			pm->n++;
		}
		line = nl ? nl + 1 : NULL;
	}
	qsort(pm->m, pm->n, sizeof(*pm->m), map_cmp);
	*out = pm;
	return 0;
cleanup:
	proc_maps__put(pm);
	return err;
}

static int read_maps(int pid, struct proc_maps **out)
{
	char path[64], *buf = NULL, *nbuf;
	size_t len = 0, cap = 0;
	ssize_t r;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 16384;
			nbuf = realloc(buf, cap + 1);
			if (!nbuf) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = nbuf;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			err = -errno;
			goto cleanup;
		}
		if (r == 0)
			break;
		len += r;
	}
	/* A zombie or a kernel thread has no maps: that is "gone" to us. */
	if (len == 0) {
		err = -ESRCH;
		goto cleanup;
	}
	buf[len] = '\0';
	err = proc_maps__parse(buf, out);
cleanup:
	free(buf);
	close(fd);
	return err;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct procs *procs__new(size_t max)
{
	struct procs *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->max = max ? max : 1;
	ps->cap = 2 * ps->max;
	ps->tab = calloc(ps->cap, sizeof(*ps->tab));
	if (!ps->tab) {
		free(ps);
		return NULL;
	}
	return ps;
}

void procs__free(struct procs *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->cap; i++)
		proc_maps__put(ps->tab[i].maps);
	free(ps->tab);
	free(ps);
}

static size_t slot_of(const struct procs *ps, int pid)
{
	return ((uint32_t)pid * 2654435761u) % ps->cap;
}

static struct proc_entry *lookup(struct procs *ps, int pid)
{
	for (size_t i = slot_of(ps, pid), k = 0; k < ps->cap; i = (i + 1) % ps->cap, k++) {
		if (ps->tab[i].pid == pid)
			return &ps->tab[i];
		if (ps->tab[i].pid == 0)
			return NULL;
	}
	return NULL;
}

/* Remove with backward-shift so probe chains stay intact without tombstones. */
static void remove_entry(struct procs *ps, struct proc_entry *e)
{
	size_t i = e - ps->tab, j = i;

	proc_maps__put(e->maps);
	e->maps = NULL;
	e->pid = 0;
	ps->n--;
	for (;;) {
		size_t home;

		j = (j + 1) % ps->cap;
		if (ps->tab[j].pid == 0)
			return;
		home = slot_of(ps, ps->tab[j].pid);
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if ((i <= j) ? (home <= i || home > j) : (home <= i && home > j)) {
			ps->tab[i] = ps->tab[j];
			ps->tab[j].pid = 0;
			ps->tab[j].maps = NULL;
			i = j;
		}
	}
}

static void evict_lru(struct procs *ps)
{
	struct proc_entry *victim = NULL;

	/* O(cap), but only when full; snapshots are taken at process rate. */
	for (size_t i = 0; i < ps->cap; i++)
		if (ps->tab[i].pid && (!victim || ps->tab[i].used < victim->used))
			victim = &ps->tab[i];
	if (victim)
		remove_entry(ps, victim);
}

static int store(struct procs *ps, int pid, struct proc_maps *pm)
{
	struct proc_entry *e = lookup(ps, pid);

	if (!e) {
		if (ps->n >= ps->max)
			evict_lru(ps);
		for (size_t i = slot_of(ps, pid);; i = (i + 1) % ps->cap) {
			if (ps->tab[i].pid == 0) {
				e = &ps->tab[i];
				break;
			}
		}
		e->pid = pid;
		ps->n++;
	} else {
		proc_maps__put(e->maps);
	}
	e->maps = pm;
	e->used = ++ps->clock;
	e->taken_ns = mono_ns();
	return 0;
}

int procs__snapshot(struct procs *ps, int pid, int ppid)
{
	struct proc_maps *pm = NULL;
	struct proc_entry *parent;
	int err;

	err = read_maps(pid, &pm);
	if (err == 0)
		return store(ps, pid, pm);
	if (err == -ENOMEM || ppid <= 0)
		return err;
	/* Gone already: a fork child's text is its parent's. */
	parent = lookup(ps, ppid);
	if (!parent) {
		if (read_maps(ppid, &pm))
			return err;
		store(ps, ppid, pm);
		parent = lookup(ps, ppid);
	}
	parent->maps->refcnt++;
	return store(ps, pid, parent->maps);
}

void procs__forget(struct procs *ps, int pid)
{
	struct proc_entry *e = lookup(ps, pid);

	if (e)
		remove_entry(ps, e);
}

const struct proc_maps *procs__get(struct procs *ps, int pid)
{
	struct proc_entry *e = lookup(ps, pid);

	if (!e) {
		if (procs__snapshot(ps, pid, 0))
			return NULL;
		e = lookup(ps, pid);
	}
	e->used = ++ps->clock;
	return e->maps;
}

const struct proc_maps *procs__get_for(struct procs *ps, int pid, uint64_t addr)
{
	const struct proc_maps *pm = procs__get(ps, pid);
	struct proc_entry *e;

	if (!pm || proc_maps__find(pm, addr))
		return pm;
	e = lookup(ps, pid);
	if (mono_ns() - e->taken_ns < REFRESH_NS)
		return pm;
	e->taken_ns = mono_ns();	/* rate-limits failures too */
	if (procs__snapshot(ps, pid, 0))
		return pm;
	return procs__get(ps, pid);
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

size_t procs__count(const struct procs *ps)
{
	return ps->n;
}
