// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <math.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <event2/event.h>

#include "stackprof.h"
#include "heap.h"
#include "log.h"
#include "pprof.h"
#include "procs.h"
#include "profile.h"
#include "profile.skel.h"
#include "sampler.h"
#include "sampler_int.h"
#include "stackprof.h"
#include "symbolizer.h"

#define DRAIN_INTERVAL_MS 100	/* samples don't wake us; we drain on this timer */
#define SYMBOLIZER_MAX_BYTES (64u << 20)
#define PROCS_MAX 16384
#define MAX_CPUS 1024
#define LEAF_CACHE_SLOTS 16381	/* prime */

struct stack_entry {
	struct stack_entry *next;
	uint64_t hash;
	uint64_t count;
	uint32_t pid;
	uint32_t tid;
	char comm[PROFD_COMM_LEN];
	char pcomm[PROFD_COMM_LEN];
	uint16_t nk;
	uint16_t nu;
	uint64_t frames[];	/* nk kernel frames, then nu user frames */
};

struct session {
	struct sampler *sm;
	int slot;
	struct session_opts opts;
	int *pids;
	char **exes;
	char *targets_text;
	struct bpf_link **links;
	int nlinks;
	struct event *timer;
	struct event *done_ev;
	bool running;
	bool done_pending;
	int64_t start_ns;
	int64_t start_mono;
	int64_t duration_ns;
	struct session_stats st;

	struct stack_entry **buckets;
	size_t nbuckets;
	size_t nstacks;
};

struct sampler {
	struct event_base *base;
	struct profile_bpf *skel;
	struct ring_buffer *rb;
	struct event *rb_ev;
	struct event *drain_ev;
	struct session *sessions[PROFD_MAX_SESSIONS];
	struct procs *procs;
	struct symbolizer *sym;
	int cpus[MAX_CPUS];
	int ncpus;
	uint64_t total_samples;
	uint64_t total_lost;
	uint64_t sessions_started;
	struct leaf_slot *leaf_cache;
	struct heap *heap;	/* heap tracking, if started */
	bool heap_loaded;	/* the allocator program is loaded */
};

static int64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* libbpf's own messages are noise to a user; show them with PROFD_DEBUG=1. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (!getenv("PROFD_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int parse_online_cpus(int *cpus, int max)
{
	char buf[4096];
	int fd, n = 0;
	ssize_t len;
	char *p;

	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -EIO;
	buf[len] = '\0';
	for (p = buf; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			return -EINVAL;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b && n < max; c++)
			cpus[n++] = (int)c;
		p = (*end == ',') ? end + 1 : end;
	}
	return n;
}

/* ---- stack aggregation ---- */

static uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	/* FNV-1a; stacks are short and this runs at sample rate only. */
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static int session__grow(struct session *s)
{
	size_t nb = s->nbuckets ? 2 * s->nbuckets : 1024;
	struct stack_entry **b = calloc(nb, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < s->nbuckets; i++) {
		struct stack_entry *e = s->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = b[e->hash % nb];
			b[e->hash % nb] = e;
		}
	}
	free(s->buckets);
	s->buckets = b;
	s->nbuckets = nb;
	return 0;
}

/*
 * Add a sample.  ustack holds the user frames to keep (the kernel's, with a
 * recovered leaf caller spliced in), nu of them.
 */
static int session__add(struct session *s, const struct profd_sample *smp, const uint64_t *ustack,
			uint16_t nu)
{
	uint16_t nk = smp->kstack_sz / sizeof(__u64);
	struct stack_entry *e;
	uint64_t h = 0xcbf29ce484222325ull;

	if (nk > PROFD_MAX_STACK)
		nk = PROFD_MAX_STACK;
	h = hash_bytes(h, &smp->pid, 8);
	h = hash_bytes(h, smp->comm, sizeof(smp->comm));
	h = hash_bytes(h, smp->kstack, nk * 8);
	h = hash_bytes(h, &nk, sizeof(nk));
	h = hash_bytes(h, ustack, nu * 8);

	if (s->nstacks >= s->nbuckets && session__grow(s))
		return -ENOMEM;
	for (e = s->buckets[h % s->nbuckets]; e; e = e->next) {
		if (e->hash == h && e->pid == smp->pid && e->tid == smp->tid && e->nk == nk &&
		    e->nu == nu && !memcmp(e->comm, smp->comm, sizeof(e->comm)) &&
		    !memcmp(e->frames, smp->kstack, nk * 8) &&
		    !memcmp(e->frames + nk, ustack, nu * 8)) {
			e->count++;
			return 0;
		}
	}
	e = malloc(sizeof(*e) + (size_t)(nk + nu) * 8);
	if (!e)
		return -ENOMEM;
	e->hash = h;
	e->count = 1;
	e->pid = smp->pid;
	e->tid = smp->tid;
	memcpy(e->comm, smp->comm, sizeof(e->comm));
	memcpy(e->pcomm, smp->pcomm, sizeof(e->pcomm));
	e->comm[PROFD_COMM_LEN - 1] = e->pcomm[PROFD_COMM_LEN - 1] = '\0';
	e->nk = nk;
	e->nu = nu;
	memcpy(e->frames, smp->kstack, nk * 8);
	memcpy(e->frames + nk, ustack, nu * 8);
	e->next = s->buckets[h % s->nbuckets];
	s->buckets[h % s->nbuckets] = e;
	s->nstacks++;
	return 0;
}

/* A session's stacks as CPU samples: values are [samples, samples * period]. */
struct cpu_iter {
	struct session *s;
	int64_t period;
};

static int session__iter(void *src, raw_stack_fn fn, void *ctx)
{
	struct cpu_iter *it = src;
	struct session *s = it->s;
	int err;

	for (size_t i = 0; i < s->nbuckets; i++) {
		for (struct stack_entry *e = s->buckets[i]; e; e = e->next) {
			struct raw_stack st = {
				.pid = e->pid, .tid = e->tid, .comm = e->comm, .pcomm = e->pcomm,
				.kframes = e->frames, .uframes = e->frames + e->nk,
				.nk = e->nk, .nu = e->nu,
				.values = {(int64_t)e->count, (int64_t)e->count * it->period},
			};

			err = fn(&st, ctx);
			if (err)
				return err;
		}
	}
	return 0;
}

/* ---- leaf callers ---- */

/*
 * Where, relative to the user stack pointer, the return address of the
 * function at (object, offset) is: >= 0 bytes, or -1 when the function has
 * set up its frame (the frame-pointer walk is then right) or is unknown.
 * A direct-mapped cache: bounded by construction, a miss only costs a CFI
 * lookup.
 */
struct leaf_slot {
	uint64_t dev;
	uint64_t ino;
	uint64_t off;
	int16_t ret_off;
	bool used;
};

static int leaf_ret_offset(struct sampler *sm, const struct proc_map *m, uint64_t off)
{
	uint64_t h = (m->ino * 0x9e3779b97f4a7c15ull) ^ (off * 0xc2b2ae3d27d4eb4full) ^ m->dev;
	struct leaf_slot *slot = &sm->leaf_cache[(h ^ (h >> 31)) % LEAF_CACHE_SLOTS];
	struct sym_object_key key = {m->path, m->dev, m->ino};
	int ret_off;

	if (slot->used && slot->dev == m->dev && slot->ino == m->ino && slot->off == off)
		return slot->ret_off;
	if (symbolizer__ret_offset(sm->sym, &key, off, &ret_off) || ret_off < 0 ||
	    ret_off >= PROFD_SP_WORDS * 8 || ret_off % 8)
		ret_off = -1;
	*slot = (struct leaf_slot){m->dev, m->ino, off, (int16_t)ret_off, true};
	return ret_off;
}

/*
 * Frame-pointer walks skip the caller of a function that has not pushed
 * its frame yet (a leaf compiled without one, or a sample in a prologue):
 * the kernel starts from the caller's frame pointer.  CFI says where the
 * return address sits on the stack; splice it in.  Returns 0 if nothing was
 * missing.
 */
static uint64_t leaf_caller(struct sampler *sm, const struct profd_sample *smp, uint16_t nu)
{
	const struct proc_maps *pm;
	const struct proc_map *m;
	uint64_t ret;
	int ret_off;

	if (nu == 0)
		return 0;
	pm = procs__get_for(sm->procs, smp->pid, smp->ustack[0]);
	m = proc_maps__find(pm, smp->ustack[0]);
	if (!m)
		return 0;
	ret_off = leaf_ret_offset(sm, m, smp->ustack[0] - m->start + m->offset);
	if (ret_off < 0)
		return 0;
	ret = smp->sp_words[ret_off / 8];
	/* A return address points into code, and isn't already the next frame. */
	if (!proc_maps__find(pm, ret) || (nu > 1 && smp->ustack[1] == ret))
		return 0;
	return ret;
}

/* ---- ring buffer ---- */

static int on_event(void *ctx, void *data, size_t size)
{
	struct sampler *sm = ctx;
	const struct profd_proc_event *pe = data;
	const struct profd_sample *smp = data;
	uint64_t ustack[PROFD_MAX_STACK + 1], caller;
	struct session *s;
	uint16_t nu;
	int err;

	if (size < sizeof(__u32))
		return 0;
	switch (pe->type) {
	case PROFD_EV_PROC:
		if (size < sizeof(*pe))
			return 0;
		/* Failing to snapshot a process that already exited is normal. */
		err = procs__snapshot(sm->procs, pe->pid, pe->reason == PROFD_PROC_FORK ||
							  pe->reason == PROFD_PROC_NEW ? pe->ppid : 0);
		log__debug("process %u (reason %u, parent %u): maps %s after %.3f ms", pe->pid,
			   pe->reason, pe->ppid, err ? strerror(-err) : "read",
			   (now_ns(CLOCK_MONOTONIC) - (int64_t)pe->ktime) / 1e6);
		/* A new program or library may bring its own allocator. */
		if (sm->heap && pe->reason != PROFD_PROC_FORK)
			heap__on_proc(sm->heap, pe->pid);
		return 0;
	case PROFD_EV_SAMPLE:
		if (size < sizeof(*smp) || smp->session >= PROFD_MAX_SESSIONS)
			return 0;
		s = sm->sessions[smp->session];
		if (!s || !s->running)
			return 0;
		nu = smp->ustack_sz / sizeof(__u64);
		if (nu > PROFD_MAX_STACK)
			nu = PROFD_MAX_STACK;
		ustack[0] = smp->ustack[0];
		caller = leaf_caller(sm, smp, nu);
		if (caller) {
			ustack[1] = caller;
			memcpy(ustack + 2, smp->ustack + 1, (nu - 1) * sizeof(*ustack));
			nu++;
		} else if (nu) {
			memcpy(ustack + 1, smp->ustack + 1, (nu - 1) * sizeof(*ustack));
		}
		if (session__add(s, smp, ustack, nu) == 0)
			s->st.samples++;
		else
			s->st.lost_ringbuf++;	/* no memory: counted as lost */
		sm->total_samples++;
		return 0;
	}
	return 0;
}

static void on_rb_readable(evutil_socket_t fd, short what, void *arg)
{
	struct sampler *sm = arg;

	ring_buffer__consume(sm->rb);
}

static void on_drain(evutil_socket_t fd, short what, void *arg)
{
	struct sampler *sm = arg;

	ring_buffer__consume(sm->rb);
}

/* ---- for heap.c ---- */

struct profile_bpf *sampler__skel(struct sampler *sm)
{
	return sm->skel;
}

struct procs *sampler__procs(struct sampler *sm)
{
	return sm->procs;
}

struct symbolizer *sampler__symbolizer(struct sampler *sm)
{
	return sm->sym;
}

bool sampler__heap_loaded(const struct sampler *sm)
{
	return sm->heap_loaded;
}

void sampler__set_heap(struct sampler *sm, struct heap *h)
{
	sm->heap = h;
}

void sampler__filters_changed(struct sampler *sm)
{
	sm->skel->data->filter_gen++;
}

void sampler__whole_system(struct sampler *sm, int delta)
{
	sm->skel->bss->all_sessions += delta;
}

/* ---- sessions ---- */

static void stats_read(struct session *s)
{
	struct sampler *sm = s->sm;
	int ncpu = libbpf_num_possible_cpus();
	__u64 *vals;
	uint64_t sum[PROFD_STAT_NR] = {};

	if (ncpu <= 0)
		return;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return;
	for (int k = 0; k < PROFD_STAT_NR; k++) {
		__u32 key = s->slot * PROFD_STAT_NR + k;

		if (bpf_map_lookup_elem(bpf_map__fd(sm->skel->maps.stats), &key, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum[k] += vals[c];
	}
	free(vals);
	s->st.lost_ringbuf += sum[PROFD_STAT_LOST_RINGBUF];
	s->st.lost_procs = sum[PROFD_STAT_LOST_PROCS];
	s->st.err_ustack = sum[PROFD_STAT_ERR_USTACK];
	s->st.err_kstack = sum[PROFD_STAT_ERR_KSTACK];
}

static void stats_reset(struct sampler *sm, int slot)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *zeros = calloc(ncpu > 0 ? ncpu : 1, sizeof(*zeros));

	if (!zeros)
		return;
	for (int k = 0; k < PROFD_STAT_NR; k++) {
		__u32 key = slot * PROFD_STAT_NR + k;

		bpf_map_update_elem(bpf_map__fd(sm->skel->maps.stats), &key, zeros, BPF_ANY);
	}
	free(zeros);
}

static int mask_update(int map_fd, const void *key, __u32 bit, bool set)
{
	__u32 mask = 0;

	bpf_map_lookup_elem(map_fd, key, &mask);
	mask = set ? (mask | bit) : (mask & ~bit);
	if (mask)
		return bpf_map_update_elem(map_fd, key, &mask, BPF_ANY) ? -errno : 0;
	bpf_map_delete_elem(map_fd, key);
	return 0;
}

int sampler__exe_filter(struct sampler *sm, const char *exe, uint32_t bit, bool set, char *errbuf,
			 size_t errlen)
{
	if (strchr(exe, '/')) {
		struct profd_exe_key key = {};
		struct stat stbuf;

		if (stat(exe, &stbuf)) {
			snprintf(errbuf, errlen, "no such executable: %s", exe);
			return -ENOENT;
		}
		/* The kernel's dev_t layout (major << 20 | minor), not glibc's. */
		key.dev = ((__u64)major(stbuf.st_dev) << 20) | minor(stbuf.st_dev);
		key.ino = stbuf.st_ino;
		return mask_update(bpf_map__fd(sm->skel->maps.exe_inodes), &key, bit, set);
	} else {
		struct profd_exe_name key = {};

		if (strlen(exe) >= sizeof(key.name) || !*exe) {
			snprintf(errbuf, errlen, "executable name must be 1..%zu bytes: %s",
				 sizeof(key.name) - 1, exe);
			return -EINVAL;
		}
		strcpy(key.name, exe);
		return mask_update(bpf_map__fd(sm->skel->maps.exe_names), &key, bit, set);
	}
}

int sampler__pid_filter(struct sampler *sm, int pid, uint32_t bit, bool set)
{
	int fd = bpf_map__fd(sm->skel->maps.procs);
	struct profd_proc p = {};
	__u32 key = pid;

	bpf_map_lookup_elem(fd, &key, &p);
	p.pid_mask = set ? (p.pid_mask | bit) : (p.pid_mask & ~bit);
	return bpf_map_update_elem(fd, &key, &p, BPF_ANY) ? -errno : 0;
}

/* Children inherited the session's bit at fork; take it back from all. */
void sampler__pid_filter_clear_all(struct sampler *sm, uint32_t bit)
{
	int fd = bpf_map__fd(sm->skel->maps.procs);
	__u32 key, next, *prev = NULL;
	struct profd_proc p;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &p) == 0 && (p.pid_mask & bit)) {
			p.pid_mask &= ~bit;
			bpf_map_update_elem(fd, &key, &p, BPF_EXIST);
		}
	}
}

static void session__detach(struct session *s)
{
	struct sampler *sm = s->sm;
	struct profd_session_cfg cfg = {};
	__u32 slot = s->slot, bit = 1u << s->slot;
	char errbuf[8];

	if (!s->running)
		return;
	bpf_map_update_elem(bpf_map__fd(sm->skel->maps.sessions), &slot, &cfg, BPF_ANY);
	for (int i = 0; i < s->nlinks; i++)
		bpf_link__destroy(s->links[i]);
	s->nlinks = 0;
	/* Everything submitted before the links went away is ours. */
	ring_buffer__consume(sm->rb);
	stats_read(s);
	for (size_t i = 0; i < s->opts.targets.nexes; i++)
		sampler__exe_filter(sm, s->exes[i], bit, false, errbuf, sizeof(errbuf));
	if (s->opts.targets.nexes)
		sampler__filters_changed(sm);
	if (s->opts.targets.npids)
		sampler__pid_filter_clear_all(sm, bit);
	if (!s->opts.targets.npids && !s->opts.targets.nexes)
		sampler__whole_system(sm, -1);
	s->running = false;
	s->duration_ns = now_ns(CLOCK_MONOTONIC) - s->start_mono;
	sm->sessions[s->slot] = NULL;
	sm->total_lost += s->st.lost_ringbuf + s->st.lost_procs;
	evtimer_del(s->timer);
}

static void on_done(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	s->done_pending = false;
	if (s->opts.done)
		s->opts.done(s, s->opts.ctx);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	session__detach(s);
	on_done(-1, 0, s);
}

void session__stop(struct session *s)
{
	if (!s || !s->running)
		return;
	session__detach(s);
	/* Not inline: the caller may be in the middle of handling a request. */
	s->done_pending = true;
	event_active(s->done_ev, EV_TIMEOUT, 0);
}

void session__free(struct session *s)
{
	if (!s)
		return;
	session__detach(s);
	if (s->timer)
		event_free(s->timer);
	if (s->done_ev)
		event_free(s->done_ev);
	for (size_t i = 0; i < s->nbuckets; i++) {
		struct stack_entry *e = s->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(s->buckets);
	free(s->links);
	free(s->pids);
	for (size_t i = 0; s->exes && i < s->opts.targets.nexes; i++)
		free(s->exes[i]);
	free(s->exes);
	free(s->targets_text);
	free(s);
}

static int open_cpu_clock(int cpu, int freq)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = freq,
	};
	int fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static char *targets_describe(const struct targets *t)
{
	size_t cap = 64 + t->npids * 12;
	char *buf, *p;

	for (size_t i = 0; i < t->nexes; i++)
		cap += strlen(t->exes[i]) + 8;
	buf = malloc(cap);
	if (!buf)
		return NULL;
	p = buf;
	if (!t->npids && !t->nexes)
		p += sprintf(p, "whole system");
	for (size_t i = 0; i < t->npids; i++)
		p += sprintf(p, "%spid %d", p == buf ? "" : ", ", t->pids[i]);
	for (size_t i = 0; i < t->nexes; i++)
		p += sprintf(p, "%sexe %s", p == buf ? "" : ", ", t->exes[i]);
	return buf;
}

int sampler__start(struct sampler *sm, const struct session_opts *opts, struct session **out,
		   char *errbuf, size_t errlen)
{
	const struct targets *t = &opts->targets;
	struct profd_session_cfg cfg = {PROFD_SESSION_ACTIVE};
	struct session *s = NULL;
	struct timeval tv;
	__u32 slot, bit;
	int err = 0;
	char dummy[8];

	if (!errbuf) {
		errbuf = dummy;
		errlen = sizeof(dummy);
	}
	if (opts->frequency < SAMPLER_MIN_FREQ || opts->frequency > SAMPLER_MAX_FREQ) {
		snprintf(errbuf, errlen, "frequency must be %d..%d Hz", SAMPLER_MIN_FREQ,
			 SAMPLER_MAX_FREQ);
		return -EINVAL;
	}
	if (opts->seconds < 1) {
		snprintf(errbuf, errlen, "seconds must be at least 1");
		return -EINVAL;
	}
	for (size_t i = 0; i < t->npids; i++) {
		if (t->pids[i] <= 0 || (kill(t->pids[i], 0) && errno == ESRCH)) {
			snprintf(errbuf, errlen, "no process with pid %d", t->pids[i]);
			return -ESRCH;
		}
	}
	for (slot = 0; slot < PROFD_MAX_SESSIONS; slot++)
		if (!sm->sessions[slot])
			break;
	if (slot == PROFD_MAX_SESSIONS) {
		snprintf(errbuf, errlen, "too many profiling sessions running (at most %d)",
			 PROFD_MAX_SESSIONS);
		return -EBUSY;
	}
	bit = 1u << slot;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->sm = sm;
	s->slot = slot;
	s->opts = *opts;
	s->links = calloc(sm->ncpus, sizeof(*s->links));
	s->pids = calloc(t->npids + 1, sizeof(*s->pids));
	s->exes = calloc(t->nexes + 1, sizeof(*s->exes));
	s->targets_text = targets_describe(t);
	s->timer = evtimer_new(sm->base, on_timer, s);
	s->done_ev = event_new(sm->base, -1, 0, on_done, s);
	if (!s->links || !s->pids || !s->exes || !s->targets_text || !s->timer || !s->done_ev) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (t->npids)
		memcpy(s->pids, t->pids, t->npids * sizeof(*s->pids));
	s->opts.targets.pids = s->pids;
	for (size_t i = 0; i < t->nexes; i++) {
		s->exes[i] = strdup(t->exes[i]);
		if (!s->exes[i]) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	s->opts.targets.exes = (const char *const *)s->exes;

	/* Filters first, so no event fires before the session knows its targets. */
	s->running = true;	/* from here on, session__free undoes what was done */
	sm->sessions[slot] = s;
	stats_reset(sm, slot);
	for (size_t i = 0; i < t->nexes; i++) {
		err = sampler__exe_filter(sm, s->exes[i], bit, true, errbuf, errlen);
		if (err)
			goto cleanup;
	}
	if (t->nexes)
		sampler__filters_changed(sm);
	for (size_t i = 0; i < t->npids; i++) {
		err = sampler__pid_filter(sm, t->pids[i], bit, true);
		if (err) {
			snprintf(errbuf, errlen, "process table full");
			goto cleanup;
		}
		procs__snapshot(sm->procs, t->pids[i], 0);
	}
	if (!t->npids && !t->nexes) {
		cfg.flags |= PROFD_SESSION_ALL;
		sampler__whole_system(sm, 1);
	}
	err = bpf_map_update_elem(bpf_map__fd(sm->skel->maps.sessions), &slot, &cfg, BPF_ANY);
	if (err) {
		err = -errno;
		snprintf(errbuf, errlen, "cannot configure session: %s", strerror(-err));
		goto cleanup;
	}

	s->start_ns = now_ns(CLOCK_REALTIME);
	s->start_mono = now_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < sm->ncpus; i++) {
		LIBBPF_OPTS(bpf_perf_event_opts, popts, .bpf_cookie = slot);
		int fd = open_cpu_clock(sm->cpus[i], opts->frequency);
		struct bpf_link *link;

		if (fd == -ENODEV)	/* went offline since we looked */
			continue;
		if (fd < 0) {
			err = fd;
			snprintf(errbuf, errlen, "perf_event_open(cpu-clock) on CPU %d: %s",
				 sm->cpus[i], strerror(-err));
			goto cleanup;
		}
		link = bpf_program__attach_perf_event_opts(sm->skel->progs.profd_sample, fd,
							   &popts);
		if (!link) {
			err = -errno;
			close(fd);
			snprintf(errbuf, errlen, "attaching to CPU %d: %s", sm->cpus[i],
				 strerror(-err));
			goto cleanup;
		}
		s->links[s->nlinks++] = link;	/* the link owns fd now */
	}
	s->st.frequency = opts->frequency;
	tv.tv_sec = opts->seconds;
	tv.tv_usec = 0;
	evtimer_add(s->timer, &tv);
	sm->sessions_started++;
	*out = s;
	return 0;
cleanup:
	session__free(s);
	return err;
}

void session__stats(const struct session *s, struct session_stats *st)
{
	*st = s->st;
	st->running = s->running;
	st->start_ns = s->start_ns;
	st->duration_ns = s->running ? now_ns(CLOCK_MONOTONIC) - s->start_mono : s->duration_ns;
}

int session__pprof(struct session *s, struct pprof **out)
{
	static const struct pprof_value_type types[] = {
		{"samples", "count"},
		{"cpu", "nanoseconds"},
	};
	char targets[256], lost[160], walk[128];
	const char *comments[] = {targets, lost, walk, NULL};
	struct stackprof_meta meta = {
		.types = types,
		.ntypes = 2,
		.period_type = "cpu",
		.period_unit = "nanoseconds",
		.period = 1000000000ll / s->opts.frequency,
		.start_ns = s->start_ns,
		.duration_ns = s->running ? now_ns(CLOCK_MONOTONIC) - s->start_mono
					  : s->duration_ns,
		.comments = comments,
	};
	struct cpu_iter it = {s, meta.period};
	struct stackprof_result res = {};
	int64_t cpu0;
	int err;

	snprintf(targets, sizeof(targets), "profd: cpu-clock at %d Hz, targets: %s",
		 s->opts.frequency, s->targets_text);
	snprintf(lost, sizeof(lost),
		 "profd: lost samples: %" PRIu64 " (ring buffer full: %" PRIu64
		 ", process table full: %" PRIu64 ")",
		 s->st.lost_ringbuf + s->st.lost_procs, s->st.lost_ringbuf, s->st.lost_procs);
	snprintf(walk, sizeof(walk),
		 "profd: stack walk failures (sample kept): user %" PRIu64 ", kernel %" PRIu64,
		 s->st.err_ustack, s->st.err_kstack);
	cpu0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	err = stackprof__build(s->sm->sym, s->sm->procs, &meta, session__iter, &it, out, &res);
	if (!err)
		log__info("profile: %" PRIu64 " samples, %" PRIu64 "/%" PRIu64
			  " user frames symbolized, lost %" PRIu64 ", built in %.1f ms CPU",
			  res.samples, res.user_frames_symbolized, res.user_frames,
			  s->st.lost_ringbuf + s->st.lost_procs,
			  (now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / 1e6);
	return err;
}

void sampler__stats(struct sampler *sm, struct sampler_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->samples = sm->total_samples;
	st->lost = sm->total_lost;
	st->sessions_started = sm->sessions_started;
	for (int i = 0; i < PROFD_MAX_SESSIONS; i++)
		st->sessions_running += sm->sessions[i] != NULL;
	st->procs_tracked = procs__count(sm->procs);
	st->symbolizer_bytes = symbolizer__cache_bytes(sm->sym);
}

static int explain_load_error(int err)
{
	if (err == -EPERM)
		log__error("not permitted to load BPF programs: run as root, or grant "
			   "CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE and CAP_SYS_RESOURCE");
	else if (err == -EACCES || err == -EINVAL)
		log__error("the kernel's verifier rejected the BPF sampler: %s (PROFD_DEBUG=1 shows "
			   "its log)", strerror(-err));
	else if (err == -ENOENT || err == -ESRCH)
		log__error("the kernel lacks something profd needs (BTF type or BPF helper): "
			   "kernel 5.15 or newer with CONFIG_DEBUG_INFO_BTF=y is required");
	else
		log__error("loading the BPF sampler failed: %s (PROFD_DEBUG=1 shows libbpf's log)",
			   strerror(-err));
	return err;
}

static __u32 ringbuf_size(int ncpus)
{
	__u32 size = 1u << 20;	/* a power of two, at least 1 MiB */

	while (size < (__u32)ncpus * (256u << 10) && size < (64u << 20))
		size <<= 1;
	return size;
}

/* -ln((i + 0.5) / n) in 16.16 fixed point: the BPF side draws exponential
 * intervals from it without floating point. */
static void fill_exp_table(volatile __u32 *table, int n)
{
	for (int i = 0; i < n; i++)
		table[i] = (__u32)(-log((i + 0.5) / n) * 65536.0);
}

int sampler__new(struct event_base *base, const struct sampler_opts *opts, struct sampler **out)
{
	struct sampler *sm;
	struct timeval tv = {0, DRAIN_INTERVAL_MS * 1000};
	int err;

	libbpf_set_print(libbpf_print);
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		log__error("this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): profd "
			   "needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOENT;
	}
	sm = calloc(1, sizeof(*sm));
	if (!sm)
		return -ENOMEM;
	sm->base = base;
	err = parse_online_cpus(sm->cpus, MAX_CPUS);
	if (err < 0) {
		log__error("cannot read /sys/devices/system/cpu/online: %s", strerror(-err));
		goto cleanup;
	}
	sm->ncpus = err;

	sm->skel = profile_bpf__open();
	if (!sm->skel) {
		err = -errno;
		log__error("cannot open the BPF object: %s", strerror(-err));
		goto cleanup;
	}
	/*
	 * The sample ring holds what arrives between two drains: ~2.3 KiB per
	 * sample, up to 1000 Hz per CPU, drained every 100 ms.  256 KiB per
	 * CPU is about 1.1x that worst case; its pages count in our RSS.
	 */
	bpf_map__set_max_entries(sm->skel->maps.events, ringbuf_size(sm->ncpus));
	fill_exp_table(sm->skel->rodata->exp_table, PROFD_EXP_TABLE);
	if (opts && opts->heap) {
		/* A uprobe.session program; libbpf 1.1 predates the section name. */
		bpf_program__set_expected_attach_type(sm->skel->progs.profd_heap,
						      BPF_TRACE_UPROBE_SESSION_VALUE);
		if (opts->heap_max_live)
			bpf_map__set_max_entries(sm->skel->maps.heap_live, opts->heap_max_live);
	} else {
		/* Kernels before 6.12 lack uprobe sessions: CPU profiling must not need them. */
		bpf_program__set_autoload(sm->skel->progs.profd_heap, false);
		bpf_map__set_max_entries(sm->skel->maps.heap_live, 1);
		bpf_map__set_max_entries(sm->skel->maps.heap_allocs, 1);
		bpf_map__set_max_entries(sm->skel->maps.heap_stacks, 1);
		bpf_map__set_max_entries(sm->skel->maps.heap_pending, 1);
	}
	err = profile_bpf__load(sm->skel);
	if (err && opts && opts->heap) {
		log__error("loading the allocator probes failed: heap tracking needs uprobe "
			   "sessions (Linux 6.12 or newer)");
		goto cleanup;
	}
	sm->heap_loaded = opts && opts->heap;
	if (err) {
		explain_load_error(err);
		goto cleanup;
	}
	err = profile_bpf__attach(sm->skel);	/* fork/exec tracepoints */
	if (err) {
		explain_load_error(err);
		goto cleanup;
	}
	/* consume() visits rings in the order added: process events first. */
	sm->rb = ring_buffer__new(bpf_map__fd(sm->skel->maps.proc_events), on_event, sm, NULL);
	if (sm->rb && ring_buffer__add(sm->rb, bpf_map__fd(sm->skel->maps.events), on_event, sm)) {
		ring_buffer__free(sm->rb);
		sm->rb = NULL;
	}
	sm->procs = procs__new(PROCS_MAX);
	sm->sym = symbolizer__new(SYMBOLIZER_MAX_BYTES);
	sm->leaf_cache = calloc(LEAF_CACHE_SLOTS, sizeof(*sm->leaf_cache));
	if (!sm->rb || !sm->procs || !sm->sym || !sm->leaf_cache) {
		err = -ENOMEM;
		log__error("out of memory setting up the sampler");
		goto cleanup;
	}
	sm->rb_ev = event_new(base, ring_buffer__epoll_fd(sm->rb), EV_READ | EV_PERSIST,
			      on_rb_readable, sm);
	sm->drain_ev = event_new(base, -1, EV_PERSIST, on_drain, sm);
	if (!sm->rb_ev || !sm->drain_ev || event_add(sm->rb_ev, NULL) ||
	    event_add(sm->drain_ev, &tv)) {
		err = -ENOMEM;
		goto cleanup;
	}
	*out = sm;
	return 0;
cleanup:
	sampler__free(sm);
	return err;
}

void sampler__free(struct sampler *sm)
{
	if (!sm)
		return;
	for (int i = 0; i < PROFD_MAX_SESSIONS; i++)
		if (sm->sessions[i])
			session__detach(sm->sessions[i]);
	if (sm->rb_ev)
		event_free(sm->rb_ev);
	if (sm->drain_ev)
		event_free(sm->drain_ev);
	ring_buffer__free(sm->rb);
	profile_bpf__destroy(sm->skel);
	procs__free(sm->procs);
	symbolizer__free(sm->sym);
	free(sm->leaf_cache);
	free(sm);
}
