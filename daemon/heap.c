// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "heap.h"
#include "log.h"
#include "pprof.h"
#include "procs.h"
#include "profile.h"
#include "profile.skel.h"
#include "sampler_int.h"
#include "stackprof.h"
#include "uprobe_place.h"

#define MAX_OBJECTS 256		/* distinct ELF objects looked at for allocators */

struct heap_object {
	uint64_t dev;
	uint64_t ino;
	int link_fd;		/* -1: no allocator in it */
};

struct heap {
	struct sampler *sm;
	struct profile_bpf *skel;
	struct heap_opts opts;
	struct target_copy {
		int *pids;
		char **exes;
	} t;
	struct heap_object objs[MAX_OBJECTS];
	size_t nobjs;
	size_t nprobed;
	int64_t start_ns;
	int64_t start_mono;
};

static int64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * BPF_LINK_CREATE for a uprobe_multi session link, by hand: the installed
 * libbpf (1.1) and uapi headers predate uprobe_multi.  The layout is the
 * kernel's union bpf_attr link_create member.
 */
struct link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 um_flags;
	__u32 pid;
};

static int attach_session(int prog_fd, const char *path, const uint64_t *offsets,
			  const uint64_t *cookies, size_t n)
{
	union {
		struct link_create_uprobe_multi lc;
		char pad[128];	/* the kernel wants trailing bytes zero */
	} attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.lc.prog_fd = prog_fd;
	attr.lc.attach_type = BPF_TRACE_UPROBE_SESSION_VALUE;
	attr.lc.path = (uintptr_t)path;
	attr.lc.offsets = (uintptr_t)offsets;
	attr.lc.cookies = (uintptr_t)cookies;
	attr.lc.cnt = n;
	attr.lc.pid = 0;	/* every process mapping it; BPF filters targets */
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

/* Look at one mapped object once: attach probes if it defines an allocator. */
static void probe_object(struct heap *h, const struct proc_map *m)
{
	struct uprobe_site sites[UPROBE_PLACE_MAX];
	uint64_t offsets[UPROBE_PLACE_MAX], cookies[UPROBE_PLACE_MAX];
	struct heap_object *o;
	size_t n = 0;
	int found, fd;

	for (size_t i = 0; i < h->nobjs; i++)
		if (h->objs[i].dev == m->dev && h->objs[i].ino == m->ino)
			return;
	if (h->nobjs == MAX_OBJECTS)
		return;
	o = &h->objs[h->nobjs++];
	o->dev = m->dev;
	o->ino = m->ino;
	o->link_fd = -1;
	found = uprobe_place__find(m->path, sites, UPROBE_PLACE_MAX);
	if (found <= 0)
		return;
	for (int i = 0; i < found; i++) {
		log__info("heap: %s: %s", m->path, sites[i].note);
		if (sites[i].wrapper)
			continue;
		offsets[n] = sites[i].offset;
		cookies[n] = PROFD_COOKIE(sites[i].fn, sites[i].stack_delta);
		n++;
	}
	if (!n)
		return;
	fd = attach_session(bpf_program__fd(h->skel->progs.profd_heap), m->path, offsets, cookies,
			    n);
	if (fd < 0) {
		log__warn("heap: attaching to %s failed: %s", m->path, strerror(-fd));
		return;
	}
	o->link_fd = fd;
	h->nprobed++;
}

static bool is_target(struct heap *h, int pid)
{
	struct profd_proc p;
	__u32 key = pid;

	if (h->skel->bss->heap_all)
		return true;
	if (bpf_map_lookup_elem(bpf_map__fd(h->skel->maps.procs), &key, &p))
		return false;
	return ((p.pid_mask | p.exe_mask) & PROFD_HEAP_BIT) != 0;
}

static void probe_process(struct heap *h, int pid)
{
	const struct proc_maps *pm = procs__get(sampler__procs(h->sm), pid);

	for (size_t i = 0; pm && i < pm->n; i++)
		probe_object(h, &pm->m[i]);
}

void heap__on_proc(struct heap *h, int pid)
{
	if (is_target(h, pid))
		probe_process(h, pid);
}

/* Does /proc/PID/exe match one of the --exe targets? */
static bool exe_matches(struct heap *h, int pid)
{
	char link[64], path[4096];
	struct stat st, want;
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	len = readlink(link, path, sizeof(path) - 1);
	if (len <= 0 || stat(link, &st))
		return false;
	path[len] = '\0';
	for (size_t i = 0; i < h->opts.targets.nexes; i++) {
		const char *e = h->opts.targets.exes[i];
		const char *base = strrchr(path, '/');

		if (strchr(e, '/')) {
			if (!stat(e, &want) && want.st_dev == st.st_dev && want.st_ino == st.st_ino)
				return true;
		} else if (base && !strcmp(base + 1, e)) {
			return true;
		}
	}
	return false;
}

/* Probe the allocators of targets running now; later ones come by heap__on_proc. */
static void probe_running(struct heap *h)
{
	struct dirent *d;
	DIR *dir;

	for (size_t i = 0; i < h->opts.targets.npids; i++)
		probe_process(h, h->opts.targets.pids[i]);
	if (h->opts.targets.npids && !h->opts.targets.nexes)
		return;
	dir = opendir("/proc");
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		int pid = atoi(d->d_name);

		if (pid <= 0)
			continue;
		if (h->opts.targets.nexes ? exe_matches(h, pid) : pid == getpid())
			probe_process(h, pid);
	}
	closedir(dir);
}

int heap__start(struct sampler *sm, const struct heap_opts *opts, struct heap **out, char *errbuf,
		size_t errlen)
{
	const struct targets *t = &opts->targets;
	struct heap *h;
	int err = 0;

	if (!sampler__heap_loaded(sm)) {
		snprintf(errbuf, errlen, "heap tracking is off: start profd with --heap");
		return -ENOTSUP;
	}
	if (opts->sample_bytes < 1 || opts->sample_bytes > (1ull << 40)) {
		snprintf(errbuf, errlen, "heap sample bytes must be 1..%llu", 1ull << 40);
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->sm = sm;
	h->skel = sampler__skel(sm);
	h->opts = *opts;
	h->t.pids = calloc(t->npids + 1, sizeof(int));
	h->t.exes = calloc(t->nexes + 1, sizeof(char *));
	if (!h->t.pids || !h->t.exes) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (t->npids)
		memcpy(h->t.pids, t->pids, t->npids * sizeof(int));
	for (size_t i = 0; i < t->nexes; i++) {
		h->t.exes[i] = strdup(t->exes[i]);
		if (!h->t.exes[i]) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	h->opts.targets.pids = h->t.pids;
	h->opts.targets.exes = (const char *const *)h->t.exes;

	for (size_t i = 0; i < t->nexes; i++) {
		err = sampler__exe_filter(sm, t->exes[i], PROFD_HEAP_BIT, true, errbuf, errlen);
		if (err)
			goto cleanup;
	}
	if (t->nexes)
		sampler__filters_changed(sm);
	for (size_t i = 0; i < t->npids; i++) {
		if (kill(t->pids[i], 0) && errno == ESRCH) {
			snprintf(errbuf, errlen, "no process with pid %d", t->pids[i]);
			err = -ESRCH;
			goto cleanup;
		}
		err = sampler__pid_filter(sm, t->pids[i], PROFD_HEAP_BIT, true);
		if (err) {
			snprintf(errbuf, errlen, "process table full");
			goto cleanup;
		}
	}
	if (!t->npids && !t->nexes) {
		h->skel->bss->heap_all = 1;
		sampler__whole_system(sm, 1);
	}
	h->start_ns = clock_ns(CLOCK_REALTIME);
	h->start_mono = clock_ns(CLOCK_MONOTONIC);
	h->skel->bss->heap_sample_bytes = opts->sample_bytes;
	sampler__set_heap(sm, h);
	probe_running(h);
	log__info("heap: tracking %s, one sample per %" PRIu64 " bytes on average, "
		  "allocators probed in %zu objects",
		  t->npids || t->nexes ? "targets" : "every process", opts->sample_bytes,
		  h->nprobed);
	*out = h;
	return 0;
cleanup:
	heap__free(h);
	return err;
}

void heap__free(struct heap *h)
{
	if (!h)
		return;
	if (h->skel) {
		h->skel->bss->heap_sample_bytes = 0;
		for (size_t i = 0; i < h->nobjs; i++)
			if (h->objs[i].link_fd >= 0)
				close(h->objs[i].link_fd);
		if (h->skel->bss->heap_all) {
			h->skel->bss->heap_all = 0;
			sampler__whole_system(h->sm, -1);
		}
		/* Leave no target bits behind for a later tracker to inherit. */
		for (size_t i = 0; i < h->opts.targets.nexes; i++)
			sampler__exe_filter(h->sm, h->opts.targets.exes[i], PROFD_HEAP_BIT, false, NULL, 0);
		if (h->opts.targets.nexes)
			sampler__filters_changed(h->sm);
		if (h->opts.targets.npids)
			sampler__pid_filter_clear_all(h->sm, PROFD_HEAP_BIT);
		sampler__set_heap(h->sm, NULL);
	}
	for (size_t i = 0; h->t.exes && i < h->opts.targets.nexes; i++)
		free(h->t.exes[i]);
	free(h->t.exes);
	free(h->t.pids);
	free(h);
}

/* ---- profiles ---- */

struct site_agg {
	struct profd_heap_site site;
	uint64_t alloc_count, alloc_bytes;
	uint64_t live_count, live_bytes;
};

struct site_table {
	struct site_agg *v;
	size_t n, cap;
	uint32_t *idx;		/* open addressing: 1 + index into v, 0 = empty */
	size_t idx_cap;		/* a power of two, > 2 * n */
};

static size_t site_hash(const struct profd_heap_site *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t h = 0xcbf29ce484222325ull;

	/* FNV-1a over the whole key: the BPF side zeroes it, padding included. */
	for (size_t i = 0; i < sizeof(*s); i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ^ (h >> 32);
}

static int site_reindex(struct site_table *t)
{
	size_t cap = t->idx_cap ? 2 * t->idx_cap : 1024;
	uint32_t *idx = calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = site_hash(&t->v[i].site) & (cap - 1);

		while (idx[j])
			j = (j + 1) & (cap - 1);
		idx[j] = i + 1;
	}
	free(t->idx);
	t->idx = idx;
	t->idx_cap = cap;
	return 0;
}

/*
 * The aggregate for site s, added if new.  Hashed: a profile looks up one
 * site per live allocation (up to the live map's 65536) among up to 16384.
 */
static struct site_agg *site_get(struct site_table *t, const struct profd_heap_site *s)
{
	size_t j;

	if (2 * (t->n + 1) > t->idx_cap && site_reindex(t))
		return NULL;
	for (j = site_hash(s) & (t->idx_cap - 1); t->idx[j]; j = (j + 1) & (t->idx_cap - 1))
		if (!memcmp(&t->v[t->idx[j] - 1].site, s, sizeof(*s)))
			return &t->v[t->idx[j] - 1];
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct site_agg *nv = realloc(t->v, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		t->v = nv;
		t->cap = cap;
	}
	memset(&t->v[t->n], 0, sizeof(t->v[0]));
	t->v[t->n].site = *s;
	t->idx[j] = ++t->n;
	return &t->v[t->n - 1];
}

/*
 * Sampled counts to estimated totals, as Go's scaleHeapSample: an
 * allocation of size s is sampled with probability 1 - exp(-s / rate).
 */
static void unsample(uint64_t count, uint64_t bytes, uint64_t rate, int64_t *ocount,
		     int64_t *obytes)
{
	double scale;

	if (!count || !bytes) {
		*ocount = *obytes = 0;
		return;
	}
	if (rate <= 1) {
		*ocount = count;
		*obytes = bytes;
		return;
	}
	scale = 1.0 / (1.0 - exp(-((double)bytes / count) / rate));
	*ocount = (int64_t)(count * scale);
	*obytes = (int64_t)(bytes * scale);
}

static const char *fn_name(uint32_t fn)
{
	static const char *const names[] = {
		[PROFD_FN_MALLOC] = "malloc", [PROFD_FN_CALLOC] = "calloc",
		[PROFD_FN_REALLOC] = "realloc", [PROFD_FN_REALLOCARRAY] = "reallocarray",
		[PROFD_FN_POSIX_MEMALIGN] = "posix_memalign",
		[PROFD_FN_ALIGNED_ALLOC] = "aligned_alloc", [PROFD_FN_MEMALIGN] = "memalign",
		[PROFD_FN_VALLOC] = "valloc", [PROFD_FN_PVALLOC] = "pvalloc",
		[PROFD_FN_FREE] = "free",
	};

	return fn < sizeof(names) / sizeof(names[0]) && names[fn] ? names[fn] : "alloc";
}

struct heap_iter {
	struct heap *h;
	struct site_table *sites;
};

static int heap_iter(void *src, raw_stack_fn fn, void *ctx)
{
	struct heap_iter *it = src;
	int stacks_fd = bpf_map__fd(it->h->skel->maps.heap_stacks);
	uint64_t rate = it->h->opts.sample_bytes;

	for (size_t i = 0; i < it->sites->n; i++) {
		struct site_agg *a = &it->sites->v[i];
		__u64 frames[PROFD_HEAP_STACK_DEPTH] = {};
		uint64_t uframes[PROFD_HEAP_STACK_DEPTH + 1];
		char comm[PROFD_COMM_LEN + 1] = {};
		struct raw_stack st = {.pid = a->site.tgid, .comm = comm, .pcomm = comm};
		uint16_t nu = 0;
		int err;

		memcpy(comm, a->site.comm, PROFD_COMM_LEN);
		/* frames[0] is the probe inside the allocator, frames[1] the
		 * caller's caller: the callsite goes between them. */
		uframes[nu++] = a->site.callsite;
		if (a->site.stack_id >= 0 &&
		    !bpf_map_lookup_elem(stacks_fd, &a->site.stack_id, frames))
			for (int k = 1; k < PROFD_HEAP_STACK_DEPTH && frames[k]; k++)
				uframes[nu++] = frames[k];
		st.uframes = uframes;
		st.nu = nu;
		st.leaf_function = fn_name(a->site.fn);
		unsample(a->alloc_count, a->alloc_bytes, rate, &st.values[0], &st.values[1]);
		unsample(a->live_count, a->live_bytes, rate, &st.values[2], &st.values[3]);
		err = fn(&st, ctx);
		if (err)
			return err;
	}
	return 0;
}

static void read_stats(struct heap *h, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *vals = calloc(ncpu > 0 ? ncpu : 1, sizeof(*vals));

	memset(sum, 0, PROFD_HSTAT_NR * sizeof(*sum));
	if (!vals)
		return;
	for (__u32 k = 0; k < PROFD_HSTAT_NR; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(h->skel->maps.heap_stats), &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum[k] += vals[c];
	}
	free(vals);
}

void heap__stats(struct heap *h, struct heap_stats *st)
{
	uint64_t sum[PROFD_HSTAT_NR];

	read_stats(h, sum);
	st->sampled = sum[PROFD_HSTAT_SAMPLED];
	st->freed = sum[PROFD_HSTAT_FREED];
	st->live_full = sum[PROFD_HSTAT_LIVE_FULL];
	st->allocs_full = sum[PROFD_HSTAT_ALLOCS_FULL];
	st->stack_errors = sum[PROFD_HSTAT_STACK_ERR];
	st->objects_probed = h->nprobed;
}

/* Collect sites from both maps.  Live allocations of exited processes are
 * dropped from the map here: their memory is gone. */
static int collect(struct heap *h, struct site_table *t)
{
	int allocs_fd = bpf_map__fd(h->skel->maps.heap_allocs);
	int live_fd = bpf_map__fd(h->skel->maps.heap_live);
	struct profd_heap_site skey, *sprev = NULL;
	struct profd_heap_ptr lkey, *lprev = NULL, dead[256];
	size_t ndead = 0;

	while (bpf_map_get_next_key(allocs_fd, sprev, &skey) == 0) {
		struct profd_heap_count c;
		struct site_agg *a;

		sprev = &skey;
		if (bpf_map_lookup_elem(allocs_fd, &skey, &c))
			continue;
		a = site_get(t, &skey);
		if (!a)
			return -ENOMEM;
		a->alloc_count += c.count;
		a->alloc_bytes += c.bytes;
	}
	while (bpf_map_get_next_key(live_fd, lprev, &lkey) == 0) {
		struct profd_heap_live v;
		struct site_agg *a;

		lprev = &lkey;
		if (bpf_map_lookup_elem(live_fd, &lkey, &v))
			continue;
		if (kill(lkey.tgid, 0) && errno == ESRCH) {
			if (ndead < sizeof(dead) / sizeof(dead[0]))
				dead[ndead++] = lkey;
			continue;
		}
		a = site_get(t, &v.site);
		if (!a)
			return -ENOMEM;
		a->live_count++;
		a->live_bytes += v.size;
	}
	for (size_t i = 0; i < ndead; i++)
		bpf_map_delete_elem(live_fd, &dead[i]);
	return 0;
}

int heap__pprof(struct heap *h, const char *default_type, struct pprof **out)
{
	static const struct pprof_value_type types[] = {
		{"alloc_objects", "count"},
		{"alloc_space", "bytes"},
		{"inuse_objects", "count"},
		{"inuse_space", "bytes"},
	};
	char head[256], loss[256], since[160];
	const char *comments[] = {head, loss, since, NULL};
	struct site_table sites = {};
	struct heap_iter it = {h, &sites};
	struct stackprof_meta meta = {
		.types = types,
		.ntypes = 4,
		.period_type = "space",
		.period_unit = "bytes",
		.period = (int64_t)h->opts.sample_bytes,
		.default_type = default_type ? default_type : "inuse_space",
		.start_ns = h->start_ns,
		.duration_ns = clock_ns(CLOCK_MONOTONIC) - h->start_mono,
		.comments = comments,
	};
	struct heap_stats st;
	int err;

	heap__stats(h, &st);
	snprintf(head, sizeof(head),
		 "profd: heap, one sample per %" PRIu64 " bytes on average; %" PRIu64
		 " allocations sampled, %" PRIu64 " of them freed",
		 h->opts.sample_bytes, st.sampled, st.freed);
	snprintf(loss, sizeof(loss),
		 "profd: sampled allocations not tracked: live map full %" PRIu64
		 ", site map full %" PRIu64 ", stack failures %" PRIu64,
		 st.live_full, st.allocs_full, st.stack_errors);
	snprintf(since, sizeof(since),
		 "profd: allocations made before tracking began are unknown (tracking for %.0f s)",
		 meta.duration_ns / 1e9);
	err = collect(h, &sites);
	err = err ?: stackprof__build(sampler__symbolizer(h->sm), sampler__procs(h->sm), &meta,
				      heap_iter, &it, out, NULL);
	free(sites.v);
	free(sites.idx);
	return err;
}
