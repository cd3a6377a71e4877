// SPDX-License-Identifier: BSD-2-Clause
/* sampler: CPU sessions: perf events per CPU, a consumer of samples (the contract: sampler.h). */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <event2/event.h>

#include "bpf/abi/cpu.h"
#include "bpf/abi/targets.h"
#include "cpu/cpu_bpf.h"
#include "cpu/sampler.h"
#include "cpu/stackagg.h"
#include "cpu/unwind.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/stagecpu.h"
#include "lib/strbuf.h"
#include "pprof/pprof.h"
#include "proc/procs.h"
#include "proc/titles.h"
#include "profile/labels.h"
#include "profile/source.h"
#include "profile/stackprof.h"
#include "tracer/bpfobj.h"
#include "tracer/kernel.h"

struct session {
	struct profile_source src;	/* first: session__source() */
	struct sampler *sm;
	int slot;
	struct session_opts opts;
	struct targets targets;	/* our copy */
	char *targets_text;
	struct bpf_link **links;
	int nlinks;
	struct event *timer;
	struct event *done_ev;
	bool running;
	bool done_pending;
	bool told_full;		/* logged that the stack tables' bound was reached */
	int64_t start_ns;
	int64_t start_mono;
	int64_t duration_ns;
	struct session_stats st;
	struct stackagg agg;
	struct stackprof_snap *snap;	/* once session__snapshot() ran */
	struct strbuf kernel_text;	/* and what the kernel offers, for the profile */
	struct session *live_prev, *live_next;	/* sampler.live: every session not yet freed */
};

static const struct profile_source_ops session_source_ops;

struct sampler {
	struct event_base *base;
	struct bpfobj *obj;
	struct unwind *unwind;
	bool debug_unwind;	/* PROFD_DEBUG_UNWIND=1: log why stacks end early */
	struct session *sessions[PROFD_MAX_SESSIONS];
	/* Every session whose profile may still be built, running or not:
	 * processes that exited before the oldest one started are dropped. */
	struct session *live;
	uint64_t total_samples;
	uint64_t total_lost;
	uint64_t sessions_started;
	size_t stack_bytes, stack_limit;	/* see sampler__set_stack_limit */
	uint64_t total_compat;		/* 32-bit samples, over the daemon's life */
};

/* ---- samples ---- */

static void on_sample(void *ctx, const struct profd_sample *smp, size_t size)
{
	struct sampler *sm = ctx;
	uint64_t ustack[PROFD_MAX_STACK + 1];
	struct unwind_result ur;
	const uint64_t *kframes = (const uint64_t *)(smp + 1);
	struct session *s;
	size_t nu, before;
	int err;

	if (smp->session >= PROFD_MAX_SESSIONS)
		return;
	s = sm->sessions[smp->session];
	if (!s || !s->running)
		return;
	if (sizeof(*smp) + (size_t)(smp->nk + smp->nu) * 8 > size || smp->nk > PROFD_MAX_STACK ||
	    smp->nu > PROFD_MAX_STACK)
		return;
	/* The kernel could not tell yet whether its executable is a target. */
	if ((smp->flags & PROFD_SF_TENTATIVE) &&
	    !bpfobj__exe_matches(sm->obj, 1u << s->slot, smp->pid)) {
		s->st.not_target++;
		return;
	}
	if (smp->flags & PROFD_SF_COMPAT)
		s->st.compat++;
	stagecpu__enter(bpfobj__stagecpu(sm->obj), BPFOBJ_STAGE_UNWIND);
	nu = unwind__user_frames(sm->unwind, bpfobj__procs(sm->obj), smp, size, ustack,
				 PROFD_MAX_STACK + 1, &ur);
	stagecpu__leave(bpfobj__stagecpu(sm->obj));
	if (ur.need_more && ur.want > smp->stack_len)
		bpfobj__stack_need(sm->obj, smp->pid, ur.want, ur.below_fp);
	if (!ur.complete && sm->debug_unwind)
		log__info("unwind: pid %u: %zu frames, stopped at %#" PRIx64 ": %s (copy %u bytes, "
			  "flags %#x)", smp->pid, nu, ur.last_pc, ur.stop ? ur.stop : "?",
			  smp->stack_len, smp->flags);
	/* Read the title while the process is alive: a short-lived one may be gone
	 * by the time the profile is built.  At most once a second per process. */
	if (s->opts.labels & LABELS_TITLE) {
		stagecpu__enter(bpfobj__stagecpu(sm->obj), BPFOBJ_STAGE_TITLES);
		titles__get(bpfobj__titles(sm->obj), smp->pid, clock__mono_ns());
		stagecpu__leave(bpfobj__stagecpu(sm->obj));
	}
	before = stackagg__bytes(&s->agg);
	s->agg.frozen = sm->stack_limit && sm->stack_bytes >= sm->stack_limit;
	err = stackagg__add(&s->agg, smp->pid, smp->tid, smp->exec_seq, smp->comm, kframes, smp->nk,
			    ustack, nu, 1);
	sm->stack_bytes += stackagg__bytes(&s->agg) - before;
	if (!err) {
		s->st.samples++;
	} else {
		s->st.lost_memory++;
		if (err == -ENOSPC && !s->told_full) {
			s->told_full = true;
			log__warn("session %d: the sessions' stacks hold %zu KiB, their share of "
				  "max_memory_mb: its new stacks are lost (counted), known ones "
				  "still count", s->slot, sm->stack_bytes >> 10);
		}
	}
	sm->total_samples++;
}

/* ---- sessions ---- */

static void stats_read(struct session *s)
{
	uint64_t sum[PROFD_STAT_NR];

	if (cpu_bpf__stats(s->sm->obj, s->slot, sum))
		return;
	s->st.lost_ringbuf = sum[PROFD_STAT_LOST_RINGBUF];
	s->st.lost_procs = sum[PROFD_STAT_LOST_PROCS];
	s->st.err_ustack = sum[PROFD_STAT_ERR_USTACK];
	s->st.err_kstack = sum[PROFD_STAT_ERR_KSTACK];
	s->st.no_uregs = sum[PROFD_STAT_NO_UREGS];
	s->st.stack_bytes = sum[PROFD_STAT_STACK_BYTES];
}

static void session__detach(struct session *s)
{
	struct sampler *sm = s->sm;
	struct profd_session_cfg cfg = {};

	if (!s->running)
		return;
	cpu_bpf__set_session(sm->obj, s->slot, &cfg);
	for (int i = 0; i < s->nlinks; i++)
		bpf_link__destroy(s->links[i]);
	s->nlinks = 0;
	/* Everything submitted before the links went away is ours. */
	bpfobj__drain(sm->obj);
	stats_read(s);
	targets__clear(&s->targets, sm->obj);
	s->running = false;
	s->duration_ns = clock__mono_ns() - s->start_mono;
	sm->sessions[s->slot] = NULL;
	sm->total_lost += s->st.lost_ringbuf + s->st.lost_procs + s->st.lost_memory;
	sm->total_compat += s->st.compat;
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

/*
 * Forget the processes that exited before every session's start: no
 * profile can hold their samples.  Without this, whole-system scrapes would
 * keep every process they ever saw until the table's bound.
 */
static void expire_procs(struct sampler *sm)
{
	int64_t oldest = clock__mono_ns();

	for (struct session *s = sm->live; s; s = s->live_next)
		if (s->start_mono && s->start_mono < oldest)
			oldest = s->start_mono;
	procs__expire(bpfobj__procs(sm->obj), oldest);
}

static void live_add(struct sampler *sm, struct session *s)
{
	s->live_prev = NULL;
	s->live_next = sm->live;
	if (sm->live)
		sm->live->live_prev = s;
	sm->live = s;
}

static void live_remove(struct sampler *sm, struct session *s)
{
	if (s->live_prev)
		s->live_prev->live_next = s->live_next;
	else if (sm->live == s)
		sm->live = s->live_next;
	if (s->live_next)
		s->live_next->live_prev = s->live_prev;
	s->live_prev = s->live_next = NULL;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	session__detach(s);
	live_remove(s->sm, s);
	expire_procs(s->sm);
	if (s->timer)
		event_free(s->timer);
	if (s->done_ev)
		event_free(s->done_ev);
	s->sm->stack_bytes -= stackagg__bytes(&s->agg);
	stackagg__free(&s->agg);
	stackprof__snap_free(s->snap);
	strbuf__free(&s->kernel_text);
	free(s->links);
	targets__free(&s->targets);
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

static int session__attach(struct session *s, char *errbuf, size_t errlen)
{
	struct sampler *sm = s->sm;
	const int *cpus = bpfobj__cpus(sm->obj);
	int err;

	for (int i = 0; i < bpfobj__ncpus(sm->obj); i++) {
		int fd = open_cpu_clock(cpus[i], s->opts.frequency);
		struct bpf_link *link;

		if (fd == -ENODEV)	/* went offline since we looked */
			continue;
		if (fd < 0) {
			snprintf(errbuf, errlen, "perf_event_open(cpu-clock) on CPU %d: %s%s",
				 cpus[i], strerror(-fd),
				 fd == -EACCES || fd == -EPERM ? " (needs CAP_PERFMON)" : "");
			return fd;
		}
		link = cpu_bpf__attach(sm->obj, fd, s->slot);
		if (!link) {
			err = -errno;
			close(fd);
			snprintf(errbuf, errlen, "attaching to CPU %d: %s", cpus[i],
				 strerror(-err));
			return err;
		}
		s->links[s->nlinks++] = link;	/* the link owns fd now */
	}
	return 0;
}

int sampler__start(struct sampler *sm, const struct session_opts *opts, struct session **out,
		   char *errbuf, size_t errlen)
{
	struct profd_session_cfg cfg = {PROFD_SESSION_ACTIVE};
	struct session *s = NULL;
	struct strbuf text = {};
	struct timeval tv;
	char dummy[8];
	__u32 slot;
	int err = 0;

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
	for (slot = 0; slot < PROFD_MAX_SESSIONS; slot++)
		if (!sm->sessions[slot])
			break;
	if (slot == PROFD_MAX_SESSIONS) {
		snprintf(errbuf, errlen, "too many profiling sessions running (at most %d)",
			 PROFD_MAX_SESSIONS);
		return -EBUSY;
	}

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->src.ops = &session_source_ops;
	s->sm = sm;
	live_add(sm, s);
	s->slot = slot;
	s->opts = *opts;
	s->opts.targets = &s->targets;
	if (opts->targets && targets__copy(&s->targets, opts->targets)) {
		live_remove(sm, s);
		free(s);
		return -ENOMEM;
	}
	targets__describe(&s->targets, &text);
	s->targets_text = strbuf__detach(&text, NULL);
	s->links = calloc(bpfobj__ncpus(sm->obj), sizeof(*s->links));
	s->timer = evtimer_new(sm->base, on_timer, s);
	s->done_ev = event_new(sm->base, -1, 0, on_done, s);
	if (!s->links || !s->targets_text || !s->timer || !s->done_ev) {
		err = -ENOMEM;
		goto cleanup;
	}

	/* Filters first, so no event fires before the session knows its targets. */
	s->running = true;	/* from here on, session__free undoes what was done */
	sm->sessions[slot] = s;
	cpu_bpf__zero_stats(sm->obj, slot);
	err = targets__apply(&s->targets, sm->obj, 1u << slot, errbuf, errlen);
	if (err)
		goto cleanup;
	if (targets__whole_system(&s->targets))
		cfg.flags |= PROFD_SESSION_ALL;
	if (s->targets.nexes)
		cfg.flags |= PROFD_SESSION_EXE;
	err = cpu_bpf__set_session(sm->obj, slot, &cfg);
	if (err) {
		snprintf(errbuf, errlen, "cannot configure session: %s", strerror(-err));
		goto cleanup;
	}
	s->start_ns = clock__real_ns();
	s->start_mono = clock__mono_ns();
	err = session__attach(s, errbuf, errlen);
	if (err)
		goto cleanup;
	s->st.frequency = opts->frequency;
	tv.tv_sec = opts->seconds;
	tv.tv_usec = 0;
	evtimer_add(s->timer, &tv);
	sm->sessions_started++;
	expire_procs(sm);
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
	st->duration_ns = s->running ? clock__mono_ns() - s->start_mono : s->duration_ns;
}

int session__snapshot(struct session *s)
{
	stackprof__snap_free(s->snap);
	s->snap = NULL;
	/* What the kernel offers, said in the profile: bpfobj is the loop's. */
	strbuf__reset(&s->kernel_text);
	strbuf__adds(&s->kernel_text, "profd: ");
	kernel__describe(bpfobj__features(s->sm->obj), NULL, &s->kernel_text);
	if (strbuf__err(&s->kernel_text))
		return -ENOMEM;
	return stackprof__snapshot(bpfobj__procs(s->sm->obj), bpfobj__titles(s->sm->obj),
				   s->opts.labels, stackagg__iter,
				   &(struct stackagg_iter){&s->agg, 1000000000ll / s->opts.frequency},
				   &s->snap);
}

int session__build(struct session *s, struct symbolizer *sym, struct pprof **out)
{
	static const struct pprof_value_type types[] = {
		{"samples", "count"},
		{"cpu", "nanoseconds"},
	};
	struct strbuf targets = {}, lost = {}, walk = {};
	const char *comments[5] = {};
	struct stackprof_meta meta = {
		.types = types,
		.ntypes = 2,
		.period_type = "cpu",
		.period_unit = "nanoseconds",
		.period = 1000000000ll / s->opts.frequency,
		.start_ns = s->start_ns,
		.duration_ns = s->duration_ns,
		.comments = comments,
		.labels = s->opts.labels,
	};
	struct stackprof_result res = {};
	uint64_t nlost = s->st.lost_ringbuf + s->st.lost_procs + s->st.lost_memory;
	int64_t cpu0;
	int err;

	if (!s->snap || s->running)
		return -EINVAL;
	strbuf__addf(&targets, "profd: cpu-clock at %d Hz, targets: %s", s->opts.frequency,
		     s->targets_text);
	strbuf__addf(&lost,
		     "profd: lost samples: %" PRIu64 " (ring buffer full: %" PRIu64
		     ", process table full: %" PRIu64 ", out of memory or over the sessions' share of "
		     "max_memory_mb: %" PRIu64 ")",
		     nlost, s->st.lost_ringbuf, s->st.lost_procs, s->st.lost_memory);
	strbuf__addf(&walk,
		     "profd: stack walk failures (sample kept): user %" PRIu64 ", kernel %" PRIu64
		     ", user registers not found %" PRIu64 "; user stack copied: %" PRIu64
		     " bytes a sample on average",
		     s->st.err_ustack, s->st.err_kstack, s->st.no_uregs,
		     s->st.stack_bytes / (s->st.samples ? s->st.samples : 1));
	if (s->st.compat)
		strbuf__addf(&walk, "; 32-bit samples: %" PRIu64 " (user frames by frame pointers "
			     "only: code built without them shows its leaf alone)", s->st.compat);
	comments[0] = targets.buf;
	comments[1] = lost.buf;
	comments[2] = walk.buf;
	comments[3] = s->kernel_text.buf;
	if (strbuf__err(&targets) || strbuf__err(&lost) || strbuf__err(&walk)) {
		err = -ENOMEM;
		goto cleanup;
	}
	cpu0 = clock__thread_cpu_ns();
	err = stackprof__build(sym, s->snap, &meta, stackagg__iter,
			       &(struct stackagg_iter){&s->agg, meta.period}, out, &res);
	if (!err)
		log__info("profile: %" PRIu64 " samples, %" PRIu64 "/%" PRIu64
			  " user frames symbolized, lost %" PRIu64 ", built in %.1f ms CPU",
			  res.samples, res.user_frames_symbolized, res.user_frames, nlost,
			  (clock__thread_cpu_ns() - cpu0) / 1e6);
cleanup:
	strbuf__free(&targets);
	strbuf__free(&lost);
	strbuf__free(&walk);
	return err;
}

static int source_snapshot(struct profile_source *src)
{
	return session__snapshot((struct session *)src);
}

static int source_build(struct profile_source *src, struct symbolizer *sym, struct pprof **out)
{
	return session__build((struct session *)src, sym, out);
}

static void source_free(struct profile_source *src)
{
	session__free((struct session *)src);
}

static const struct profile_source_ops session_source_ops = {
	.building = "building the profile",
	.snapshot = source_snapshot,
	.build = source_build,
	.free = source_free,
};

struct profile_source *session__source(struct session *s)
{
	return &s->src;
}

void sampler__unwind_stats(const struct sampler *sm, struct unwind_stats *st)
{
	unwind__stats(sm->unwind, st);
}

void sampler__stats(struct sampler *sm, struct sampler_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->samples = sm->total_samples;
	st->lost = sm->total_lost;
	st->sessions_started = sm->sessions_started;
	for (int i = 0; i < PROFD_MAX_SESSIONS; i++)
		st->sessions_running += sm->sessions[i] != NULL;
	st->compat = sm->total_compat;
	st->stack_bytes = sm->stack_bytes;
	st->stack_limit = sm->stack_limit;
}

void sampler__set_stack_limit(struct sampler *sm, size_t bytes)
{
	sm->stack_limit = bytes;
}

int sampler__new(struct event_base *base, struct bpfobj *o, struct symbolizer *unwind_sym,
		 const struct sampler_opts *opts, struct sampler **out)
{
	struct sampler *sm = calloc(1, sizeof(*sm));
	int err;

	if (!sm)
		return -ENOMEM;
	sm->base = base;
	sm->obj = o;
	sm->unwind = unwind__new(unwind_sym, opts && opts->trace_unwind);
	sm->debug_unwind = opts && opts->debug_unwind;
	if (!sm->unwind) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = bpfobj__add_consumer(o, &(struct bpfobj_consumer){.on_sample = on_sample,
								 .ctx = sm});
	if (err)
		goto cleanup;
	*out = sm;
	return 0;
cleanup:
	unwind__free(sm->unwind);
	free(sm);
	return err;
}

void sampler__free(struct sampler *sm)
{
	if (!sm)
		return;
	for (int i = 0; i < PROFD_MAX_SESSIONS; i++)
		if (sm->sessions[i])
			session__detach(sm->sessions[i]);
	bpfobj__remove_consumer(sm->obj, sm);
	unwind__free(sm->unwind);
	free(sm);
}
