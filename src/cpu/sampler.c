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
#include "bpf/abi/offcpu.h"
#include "bpf/abi/targets.h"
#include "cpu/cpu_bpf.h"
#include "cpu/offcpu.h"
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
	uint64_t ostat0[PROFD_OSTAT_NR];	/* off-CPU: the kernel's counters at start */
	uint64_t offcpu_period;		/* off-CPU: the period it ran with */
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
	/* Off-CPU and wall-clock sessions (offcpu.bpf.c): their slot bits,
	 * all, whole-system, with executable targets, and wall-clock; the
	 * program's link while any runs; switch-out stacks waiting for their
	 * time. */
	uint32_t offcpu_mask, offcpu_all, offcpu_exe, offcpu_wall;
	struct bpf_link *offcpu_link;
	struct offcpu_pending *pend;
	uint64_t offcpu_period;
};

/* Threads whose kept switch-out waits for its switch-in at once, at most
 * (by tid modulo this): ~100 bytes each, and their frames. */
#define OFFCPU_PENDING 16384

/* Which programs a kind of session runs: the perf events' sampler, the
 * sched_switch one. */
static bool kind_cpu(enum session_kind k)
{
	return k == SESSION_CPU || k == SESSION_WALL;
}

static bool kind_offcpu(enum session_kind k)
{
	return k == SESSION_OFFCPU || k == SESSION_WALL;
}

/* A wall-clock profile's samples/count, in 16.16 fixed point (stackagg's
 * weighted counts): ns over the period, the CPU samples that time stands
 * for at the session's frequency.  ns may be up to 2^57 (time / p). */
static uint64_t wall_count(uint64_t ns, uint64_t period)
{
	if (!period)
		return 0;
	return (ns / period << 16) + ((ns % period) << 16) / period;
}

/* ---- samples ---- */

/* User frames of smp by CFI over its copy (or its frame-pointer walk):
 * their count, into ustack. */
static size_t unwind_sample(struct sampler *sm, const struct profd_sample *smp, size_t size,
			    uint64_t *ustack, size_t max)
{
	struct unwind_result ur;
	size_t nu;

	stagecpu__enter(bpfobj__stagecpu(sm->obj), BPFOBJ_STAGE_UNWIND);
	nu = unwind__user_frames(sm->unwind, bpfobj__procs(sm->obj), smp, size, ustack, max, &ur);
	stagecpu__leave(bpfobj__stagecpu(sm->obj));
	if (ur.need_more && ur.want > smp->stack_len)
		bpfobj__stack_need(sm->obj, smp->pid, ur.want, ur.below_fp);
	else if (ur.used && smp->stack_len > PROFD_STACK_SMALL)
		bpfobj__stack_used(sm->obj, smp->pid, ur.used);
	if (!ur.complete && sm->debug_unwind)
		log__info("unwind: pid %u: %zu frames, stopped at %#" PRIx64 ": %s (copy %u bytes, "
			  "flags %#x)", smp->pid, nu, ur.last_pc, ur.stop ? ur.stop : "?",
			  smp->stack_len, smp->flags);
	return nu;
}

/* Read the title while the process is alive: a short-lived one may be gone
 * by the time the profile is built.  At most once a second per process.
 * A sample of the main thread names the process: its comm is not read
 * again from /proc (other threads may have names of their own). */
static void read_title(struct sampler *sm, const struct profd_sample *smp)
{
	char comm[sizeof(smp->comm) + 1];

	memcpy(comm, smp->comm, sizeof(smp->comm));
	comm[sizeof(smp->comm)] = '\0';
	stagecpu__enter(bpfobj__stagecpu(sm->obj), BPFOBJ_STAGE_TITLES);
	titles__get_named(bpfobj__titles(sm->obj), smp->pid, smp->pid == smp->tid ? comm : NULL,
			  clock__mono_ns());
	stagecpu__leave(bpfobj__stagecpu(sm->obj));
}

/* The nanoseconds a sample stands for: 1/F s of CPU, or the off-CPU period. */
static int64_t session_period(const struct session *s)
{
	if (!kind_cpu(s->opts.kind))
		return (int64_t)s->offcpu_period;
	return s->opts.frequency ? 1000000000ll / s->opts.frequency : 0;
}

/* Count a stack in s (weight: off-CPU), under the sessions' memory bound. */
static void session_add(struct sampler *sm, struct session *s, uint32_t pid, uint32_t tid,
			uint32_t exec_seq, const char *comm, const uint64_t *kframes, size_t nk,
			const uint64_t *uframes, size_t nu, uint64_t count, uint64_t weight,
			uint64_t tag)
{
	size_t before = stackagg__bytes(&s->agg);
	int err;

	s->agg.frozen = sm->stack_limit && sm->stack_bytes >= sm->stack_limit;
	err = stackagg__add_weighted(&s->agg, pid, tid, exec_seq, comm, kframes, nk, uframes, nu,
				     count, weight, tag);
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
}

/* An off-CPU session in slot, running? */
static struct session *offcpu_session(struct sampler *sm, int slot)
{
	struct session *s = sm->sessions[slot];

	return s && s->running && kind_offcpu(s->opts.kind) ? s : NULL;
}

/* A kept switch-out's stacks (offcpu.bpf.c): unwound now, while the
 * process is there, and held until its time comes. */
static void on_switch_out(struct sampler *sm, const struct profd_sample *smp, size_t size)
{
	uint64_t ustack[PROFD_MAX_STACK + 1];
	uint32_t slots = (smp->session | smp->session >> 16) & ((1u << PROFD_MAX_SESSIONS) - 1);
	bool title = false, any = false;
	size_t nu;

	for (int i = 0; i < PROFD_MAX_SESSIONS; i++) {
		struct session *s = (slots & (1u << i)) ? offcpu_session(sm, i) : NULL;

		any |= s != NULL;
		title |= s && (s->opts.labels & LABELS_TITLE);
	}
	if (!any)
		return;
	nu = unwind_sample(sm, smp, size, ustack, PROFD_MAX_STACK + 1);
	if (title)
		read_title(sm, smp);
	if (offcpu_pending__put(sm->pend, smp, ustack, nu))
		sm->total_lost++;
}

/* Does s target pid?  (For a wait that went off CPU before s began: the
 * kernel decided it for the sessions running then.) */
static bool session_targets(struct sampler *sm, const struct session *s, uint32_t pid)
{
	uint32_t bit = 1u << s->slot;

	if (targets__whole_system(&s->targets) || (bpfobj__pid_mask(sm->obj, pid) & bit))
		return true;
	return s->targets.nexes && bpfobj__exe_matches(sm->obj, bit, pid);
}

/*
 * s's share of st's kept wait, which went off CPU at off_ns (offcpu__share),
 * once s's targets are asked where the kernel did not decide for s: an own
 * wait kept undecided whose executable is no target of s (counted), or a
 * part of a process s does not target, is none.  targets: s is known to
 * target st's process (else asked, if need be).
 */
static enum offcpu_share wait_share(struct sampler *sm, struct session *s,
				    const struct offcpu_stack *st, uint64_t off_ns, bool targets)
{
	uint32_t bit = 1u << s->slot;

	switch (offcpu__share(st, s->slot, s->start_mono, off_ns)) {
	case OFFCPU_OWN:
		/* The kernel could not tell yet whether its executable is a target. */
		if (!(st->sessions & bit) && !bpfobj__exe_matches(sm->obj, bit, st->pid)) {
			s->st.not_target++;
			return OFFCPU_NONE;
		}
		return OFFCPU_OWN;
	case OFFCPU_PART:
		return targets || session_targets(sm, s, st->pid) ? OFFCPU_PART : OFFCPU_NONE;
	case OFFCPU_NONE:
		break;
	}
	return OFFCPU_NONE;
}

/*
 * Add st's kept wait to s: e's time, weighed by the probability it was
 * kept with.  own: its switch-out was in s (kept for s), so s counts the
 * switch too; else e->ns is only the part of the wait inside s.
 */
static void add_wait(struct sampler *sm, struct session *s, const struct offcpu_stack *st,
		     const struct profd_offcpu_end *e, bool own)
{
	uint64_t switches, ns, tag = 0;

	/* Only wall sessions get preempted switches, and say which were. */
	if ((e->flags & PROFD_OE_RUNQ) && s->opts.kind != SESSION_WALL)
		return;
	offcpu__weight(e, &switches, &ns);
	if ((e->flags & PROFD_OE_WAIT) && e->wait_event)
		tag = STACKAGG_TAG_WAIT | (uint64_t)(e->pg_major & 0xffff) << 32 | e->wait_event;
	if (own && (e->flags & PROFD_OE_NO_WAIT))
		s->st.pg_no_wait++;
	if (s->opts.kind == SESSION_WALL)
		session_add(sm, s, st->pid, st->tid, st->exec_seq, st->comm, st->frames, st->nk,
			    st->frames + st->nk, st->nu, wall_count(ns, session_period(s)), ns,
			    tag | (e->flags & PROFD_OE_RUNQ ? STACKAGG_TAG_RUNQ : STACKAGG_TAG_SLEEP));
	else
		session_add(sm, s, st->pid, st->tid, st->exec_seq, st->comm, st->frames, st->nk,
			    st->frames + st->nk, st->nu, own ? switches : 0, ns, tag);
}

/*
 * A kept switch's time.  Each running session gets the part of the wait
 * inside it (offcpu__share): all of it where its switch-out was in the
 * session; the part since the session began where it began before, if
 * the session targets its process.
 */
static void on_offcpu(void *ctx, const struct profd_offcpu_end *e)
{
	struct sampler *sm = ctx;
	const struct offcpu_stack *st = offcpu_pending__take(sm->pend, e);

	if (!st) {
		for (int i = 0; i < PROFD_MAX_SESSIONS; i++)
			if (offcpu_session(sm, i))
				sm->sessions[i]->st.lost_unjoined++;
		return;
	}
	for (int i = 0; i < PROFD_MAX_SESSIONS; i++) {
		struct session *s = offcpu_session(sm, i);
		struct profd_offcpu_end part;

		if (!s)
			continue;
		switch (wait_share(sm, s, st, e->off_ns, false)) {
		case OFFCPU_OWN:
			add_wait(sm, s, st, e, true);
			break;
		case OFFCPU_PART:
			part = *e;
			part.ns = offcpu__part(s->start_mono, e->off_ns, e->off_ns + e->ns);
			if (part.ns)
				add_wait(sm, s, st, &part, false);
			break;
		case OFFCPU_NONE:
			break;
		}
	}
	sm->total_samples++;
}

static void on_sample(void *ctx, const struct profd_sample *smp, size_t size)
{
	struct sampler *sm = ctx;
	uint64_t ustack[PROFD_MAX_STACK + 1];
	const uint64_t *kframes = (const uint64_t *)(smp + 1);
	struct session *s;
	size_t nu;

	if (sizeof(*smp) + (size_t)(smp->nk + smp->nu) * 8 > size || smp->nk > PROFD_MAX_STACK ||
	    smp->nu > PROFD_MAX_STACK)
		return;
	if (smp->flags & PROFD_SF_OFFCPU) {
		on_switch_out(sm, smp, size);
		return;
	}
	if (smp->session >= PROFD_MAX_SESSIONS)
		return;
	s = sm->sessions[smp->session];
	if (!s || !s->running || !kind_cpu(s->opts.kind))
		return;
	/* The kernel could not tell yet whether its executable is a target. */
	if ((smp->flags & PROFD_SF_TENTATIVE) &&
	    !bpfobj__exe_matches(sm->obj, 1u << s->slot, smp->pid)) {
		s->st.not_target++;
		return;
	}
	if (smp->flags & PROFD_SF_COMPAT)
		s->st.compat++;
	nu = unwind_sample(sm, smp, size, ustack, PROFD_MAX_STACK + 1);
	if (s->opts.labels & LABELS_TITLE)
		read_title(sm, smp);
	/* A wall-clock profile's sample is 1/F s, in the off-CPU time's units. */
	if (s->opts.kind == SESSION_WALL)
		session_add(sm, s, smp->pid, smp->tid, smp->exec_seq, smp->comm, kframes, smp->nk,
			    ustack, nu, 1u << 16, session_period(s), STACKAGG_TAG_CPU);
	else
		session_add(sm, s, smp->pid, smp->tid, smp->exec_seq, smp->comm, kframes, smp->nk,
			    ustack, nu, 1, 0, 0);
	sm->total_samples++;
}

/* ---- sessions ---- */

/* What a session lost: in the kernel (by the programs it runs), and here
 * (no memory). */
static uint64_t session_lost(const struct session *s)
{
	const struct session_stats *st = &s->st;
	uint64_t n = st->lost_memory;

	if (kind_cpu(s->opts.kind))
		n += st->lost_ringbuf + st->lost_procs;
	if (kind_offcpu(s->opts.kind))
		n += st->switch_lost_ringbuf + st->switch_lost_threads + st->lost_unjoined;
	return n;
}

static void stats_read(struct session *s)
{
	uint64_t sum[PROFD_STAT_NR], o[PROFD_OSTAT_NR];

	/* The off-CPU counters are all sessions': what changed while s ran. */
	if (kind_offcpu(s->opts.kind) && !cpu_bpf__offcpu_stats(s->sm->obj, o)) {
		s->st.switches = o[PROFD_OSTAT_SWITCHES] - s->ostat0[PROFD_OSTAT_SWITCHES];
		s->st.kept = o[PROFD_OSTAT_KEPT] - s->ostat0[PROFD_OSTAT_KEPT];
		s->st.switch_lost_ringbuf =
			o[PROFD_OSTAT_LOST_RINGBUF] - s->ostat0[PROFD_OSTAT_LOST_RINGBUF];
		s->st.switch_lost_threads =
			o[PROFD_OSTAT_LOST_THREADS] - s->ostat0[PROFD_OSTAT_LOST_THREADS];
		s->st.switch_no_uregs = o[PROFD_OSTAT_NO_UREGS] - s->ostat0[PROFD_OSTAT_NO_UREGS];
	}
	if (!kind_cpu(s->opts.kind) || cpu_bpf__stats(s->sm->obj, s->slot, sum))
		return;
	s->st.lost_ringbuf = sum[PROFD_STAT_LOST_RINGBUF];
	s->st.lost_procs = sum[PROFD_STAT_LOST_PROCS];
	s->st.err_ustack = sum[PROFD_STAT_ERR_USTACK];
	s->st.err_kstack = sum[PROFD_STAT_ERR_KSTACK];
	s->st.no_uregs = sum[PROFD_STAT_NO_UREGS];
	s->st.stack_bytes = sum[PROFD_STAT_STACK_BYTES];
}

/*
 * Add (on) or take out s's bit from the off-CPU program's sessions; the
 * program is attached while any runs, so a daemon without off-CPU
 * sessions pays nothing at context switches.  0 or negative errno.
 */
static int offcpu_update(struct sampler *sm, struct session *s, bool on)
{
	uint32_t bit = 1u << s->slot;
	bool all = targets__whole_system(&s->targets), exe = s->targets.nexes;
	bool wall = s->opts.kind == SESSION_WALL;

	if (on) {
		if (!sm->offcpu_link) {
			sm->offcpu_link = cpu_bpf__offcpu_attach(sm->obj);
			if (!sm->offcpu_link)
				return -errno;
		}
		sm->offcpu_mask |= bit;
		sm->offcpu_all |= all ? bit : 0;
		sm->offcpu_exe |= exe ? bit : 0;
		sm->offcpu_wall |= wall ? bit : 0;
	} else {
		sm->offcpu_mask &= ~bit;
		sm->offcpu_all &= ~bit;
		sm->offcpu_exe &= ~bit;
		sm->offcpu_wall &= ~bit;
	}
	cpu_bpf__offcpu_set(sm->obj, sm->offcpu_mask, sm->offcpu_all, sm->offcpu_exe,
			    sm->offcpu_wall);
	if (!sm->offcpu_mask && sm->offcpu_link) {
		bpf_link__destroy(sm->offcpu_link);
		sm->offcpu_link = NULL;
	}
	return 0;
}

struct unended {
	struct session *s;
	int64_t end;		/* the session's, CLOCK_MONOTONIC */
};

/*
 * At a session's end, each kept wait still in progress gives it its part
 * inside the session: since the wait began, or since the session did (a
 * wait kept for a session running then, of a process this one targets).
 * The kernel's slot of the thread says when it went off CPU and with what
 * probability it was kept, if the switch is still in progress there (its
 * switch-in, if it came after the drain, is on its way and counts in the
 * sessions still running).  Each is named at debug level: telling them
 * from waits joined without a wait event is what a missing one needs.
 */
static enum offcpu_each add_unended(const struct offcpu_stack *st, void *ctx)
{
	struct unended *u = ctx;
	struct session *s = u->s;
	struct sampler *sm = s->sm;
	uint32_t bit = 1u << s->slot;
	struct profd_offcpu_thread t;
	struct profd_offcpu_end e = {};
	enum offcpu_share share;
	bool named = st->sessions & (bit | bit << 16), targets = false;

	/* Neither kept for it nor of its targets: no kernel lookup (the
	 * pending table holds every thread's last kept wait, the exited
	 * ones' too). */
	if (!named && !(targets = session_targets(sm, s, st->pid)))
		return OFFCPU_SKIP;
	/* Its switch-out, and its probability, as the kernel holds them while
	 * the switch is in progress.  A thread with no slot of this epoch (the
	 * program was attached again since, or its slot is another thread's)
	 * will send no switch-in: the stack goes, so that no later session
	 * looks it up again. */
	if (cpu_bpf__offcpu_thread(sm->obj, st->tid, &t))
		return OFFCPU_DROP;
	if (t.pid != st->pid || t.seq != st->seq || !t.off_ns || !t.p)
		return OFFCPU_SKIP;
	share = wait_share(sm, s, st, t.off_ns, targets);
	if (share == OFFCPU_NONE)
		return OFFCPU_SKIP;
	e.p = t.p;
	e.ns = offcpu__part(s->start_mono, t.off_ns, (uint64_t)u->end);
	e.flags = t.flags;
	e.wait_event = t.wait_event;
	e.pg_major = t.pg_major;
	if (!e.ns)
		return OFFCPU_SKIP;
	add_wait(sm, s, st, &e, share == OFFCPU_OWN);
	log__debug("off-CPU session %d: pid %u tid %u (%.16s) still off CPU at the end "
		   "(its kept switch %u, off CPU for %.3f s of the session)",
		   s->slot, st->pid, st->tid, st->comm, st->seq, e.ns / 1e9);
	return OFFCPU_COUNT;
}

static void session__detach(struct session *s)
{
	struct sampler *sm = s->sm;
	struct profd_session_cfg cfg = {};
	struct unended u = {s, clock__mono_ns()};

	if (!s->running)
		return;
	cpu_bpf__set_session(sm->obj, s->slot, &cfg);
	if (kind_offcpu(s->opts.kind))
		offcpu_update(sm, s, false);
	for (int i = 0; i < s->nlinks; i++)
		bpf_link__destroy(s->links[i]);
	s->nlinks = 0;
	/* Everything submitted before the links went away is ours. */
	bpfobj__drain(sm->obj);
	unwind__release_pages(sm->unwind);
	if (kind_offcpu(s->opts.kind))
		s->st.unended = offcpu_pending__each(sm->pend, add_unended, &u);
	stats_read(s);
	targets__clear(&s->targets, sm->obj);
	s->running = false;
	s->duration_ns = clock__mono_ns() - s->start_mono;
	sm->sessions[s->slot] = NULL;
	sm->total_lost += session_lost(s);
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
 * Forget the processes (their maps and titles) that exited before every
 * session's start: no profile can hold their samples.  Without this, whole-system scrapes would
 * keep every process they ever saw until the table's bound.
 */
static void expire_procs(struct sampler *sm)
{
	int64_t oldest = clock__mono_ns();

	for (struct session *s = sm->live; s; s = s->live_next)
		if (s->start_mono && s->start_mono < oldest)
			oldest = s->start_mono;
	procs__expire(bpfobj__procs(sm->obj), oldest);
	titles__expire(bpfobj__titles(sm->obj), oldest);
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
	if (opts->kind >= SESSION_KINDS) {
		snprintf(errbuf, errlen, "no such kind of session");
		return -EINVAL;
	}
	if (kind_offcpu(opts->kind) && !cpu_bpf__offcpu_loaded(sm->obj)) {
		snprintf(errbuf, errlen, "off-CPU profiles need the sched:sched_switch tracepoint, "
			 "which this kernel does not offer");
		return -EOPNOTSUPP;
	}
	if (kind_cpu(opts->kind) &&
	    (opts->frequency < SAMPLER_MIN_FREQ || opts->frequency > SAMPLER_MAX_FREQ)) {
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
	if (kind_offcpu(opts->kind)) {
		s->offcpu_period = sm->offcpu_period;
		cpu_bpf__offcpu_stats(sm->obj, s->ostat0);
		err = offcpu_update(sm, s, true);
		if (err)
			snprintf(errbuf, errlen, "attaching to sched:sched_switch: %s",
				 strerror(-err));
	}
	if (!err && kind_cpu(opts->kind))
		err = session__attach(s, errbuf, errlen);
	if (err)
		goto cleanup;
	s->st.frequency = kind_cpu(opts->kind) ? opts->frequency : 0;
	s->st.kind = opts->kind;
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

/* A profile's comments, as its kind writes them. */
#define SESSION_COMMENTS 6
struct comments {
	struct strbuf sb[SESSION_COMMENTS];
	size_t n;
};

/* The next comment to write (the last one again, should a kind write
 * more than SESSION_COMMENTS). */
static struct strbuf *comment(struct comments *c)
{
	return &c->sb[c->n < SESSION_COMMENTS ? c->n++ : SESSION_COMMENTS - 1];
}

/* What the CPU sampler lost, and how its stack walks went. */
static void cpu_comments(const struct session *s, struct comments *c)
{
	const struct session_stats *st = &s->st;
	struct strbuf *walk;

	strbuf__addf(comment(c),
		     "profd: lost samples: %" PRIu64 " (ring buffer full: %" PRIu64
		     ", process table full: %" PRIu64 ", out of memory or over the sessions' share of "
		     "max_memory_mb: %" PRIu64 ")",
		     st->lost_ringbuf + st->lost_procs + st->lost_memory, st->lost_ringbuf,
		     st->lost_procs, st->lost_memory);
	walk = comment(c);
	strbuf__addf(walk,
		     "profd: stack walk failures (sample kept): user %" PRIu64 ", kernel %" PRIu64
		     ", user registers not found %" PRIu64 "; user stack copied: %" PRIu64
		     " bytes a sample on average",
		     st->err_ustack, st->err_kstack, st->no_uregs,
		     st->stack_bytes / (st->samples ? st->samples : 1));
	if (st->compat)
		strbuf__addf(walk, "; 32-bit samples: %" PRIu64 " (user frames by frame pointers "
			     "only: code built without them shows its leaf alone)", st->compat);
}

/* What the off-CPU program lost, and postgres processes without wait events. */
static void offcpu_comments(const struct session *s, struct comments *c)
{
	const struct session_stats *st = &s->st;

	strbuf__addf(comment(c),
		     "profd: lost switches: %" PRIu64 " (ring buffer full: %" PRIu64
		     ", its thread's slot taken: %" PRIu64 ", stack lost before its time: %" PRIu64
		     ", out of memory or over the sessions' share of max_memory_mb: %" PRIu64
		     "); user registers not found (kernel stack only): %" PRIu64
		     "; time off CPU is counted inside the profile's window: a wait in "
		     "progress at its end up to the end, one that began before it from its "
		     "start where a profile then running watched the thread",
		     st->switch_lost_ringbuf + st->switch_lost_threads + st->lost_unjoined +
			     st->lost_memory,
		     st->switch_lost_ringbuf,
		     st->switch_lost_threads, st->lost_unjoined, st->lost_memory,
		     st->switch_no_uregs);
	/* A postgres without my_wait_event_info in its dynamic symbols (or
	 * whose memory held no readable pointer there): said once. */
	if (st->pg_no_wait)
		strbuf__addf(comment(c), "profd: %" PRIu64 " kept switches of postgres processes "
			     "have no wait_event: my_wait_event_info is not among their "
			     "executable's dynamic symbols (stripped of it), or could not be read",
			     st->pg_no_wait);
}

static void cpu_profile(const struct session *s, struct comments *c)
{
	strbuf__addf(comment(c), "profd: cpu-clock at %d Hz, targets: %s", s->opts.frequency,
		     s->targets_text);
	cpu_comments(s, c);
}

static void offcpu_profile(const struct session *s, struct comments *c)
{
	strbuf__addf(comment(c), "profd: off-CPU time at context switches, sampled by duration "
		     "(a kept switch stands for %.3f ms on average), targets: %s; blocked "
		     "switch-outs of targets: %" PRIu64 ", stacks taken: %" PRIu64,
		     s->offcpu_period / 1e6, s->targets_text, s->st.switches, s->st.kept);
	offcpu_comments(s, c);
}

static void wall_profile(const struct session *s, struct comments *c)
{
	strbuf__addf(comment(c), "profd: wall-clock time: on CPU by cpu-clock at %d Hz (a sample "
		     "weighs %.3f ms), off CPU (blocked, or preempted and waiting for a CPU) at "
		     "context switches, sampled by duration (a kept switch stands for %.3f ms on "
		     "average), targets: %s; their switch-outs: %" PRIu64 ", stacks taken: %" PRIu64,
		     s->opts.frequency, 1e3 / s->opts.frequency, s->offcpu_period / 1e6,
		     s->targets_text, s->st.switches, s->st.kept);
	cpu_comments(s, c);
	offcpu_comments(s, c);
}

/* What each kind of session's profile is. */
static const struct kind_desc {
	const char *name;	/* in the log */
	struct pprof_value_type types[2];
	const char *period_type;	/* in nanoseconds */
	/* Values from stackagg's weights (16.16 counts, nanoseconds), not
	 * count and count x period. */
	bool weighted;
	void (*comments)(const struct session *s, struct comments *c);
} kinds[SESSION_KINDS] = {
	[SESSION_CPU] = {"profile", {{"samples", "count"}, {"cpu", "nanoseconds"}}, "cpu", false,
			 cpu_profile},
	[SESSION_OFFCPU] = {"off-CPU profile", {{"switches", "count"}, {"offcpu", "nanoseconds"}},
			    "offcpu", true, offcpu_profile},
	/* As Go's fgprof and the profile types Grafana knows it by
	 * (fgprof:time:nanoseconds:wallclock:nanoseconds). */
	[SESSION_WALL] = {"wall-clock profile", {{"samples", "count"}, {"time", "nanoseconds"}},
			  "wallclock", true, wall_profile},
};

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
				   &(struct stackagg_iter){&s->agg, 1, kinds[s->opts.kind].weighted},
				   &s->snap);
}

int session__build(struct session *s, struct symbolizer *sym, struct pprof **out)
{
	const struct kind_desc *k = &kinds[s->opts.kind];
	const char *text[SESSION_COMMENTS + 2] = {};
	struct comments c = {};
	struct stackprof_meta meta = {
		.types = k->types,
		.ntypes = 2,
		.period_type = k->period_type,
		.period_unit = "nanoseconds",
		.period = session_period(s),
		.start_ns = s->start_ns,
		.duration_ns = s->duration_ns,
		.comments = text,
		.labels = s->opts.labels,
	};
	struct stackprof_result res = {};
	int64_t cpu0;
	int err = 0;

	if (!s->snap || s->running)
		return -EINVAL;
	k->comments(s, &c);
	for (size_t i = 0; i < c.n; i++) {
		text[i] = c.sb[i].buf;
		if (strbuf__err(&c.sb[i]))
			err = -ENOMEM;
	}
	text[c.n] = s->kernel_text.buf;
	if (err)
		goto cleanup;
	cpu0 = clock__thread_cpu_ns();
	err = stackprof__build(sym, s->snap, &meta, stackagg__iter,
			       &(struct stackagg_iter){&s->agg, meta.period, k->weighted}, out, &res);
	if (!err)
		log__info("%s: %" PRIu64 " %s, %" PRIu64 "/%" PRIu64 " user frames symbolized, "
			  "lost %" PRIu64 ", built in %.1f ms CPU", k->name, res.samples,
			  k->weighted ? "stacks" : "samples", res.user_frames_symbolized,
			  res.user_frames, session_lost(s), (clock__thread_cpu_ns() - cpu0) / 1e6);
cleanup:
	for (size_t i = 0; i < SESSION_COMMENTS; i++)
		strbuf__free(&c.sb[i]);
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

void sampler__set_offcpu_period(struct sampler *sm, uint64_t ns)
{
	sm->offcpu_period = ns ? ns : PROFD_OFFCPU_PERIOD_NS;
	cpu_bpf__offcpu_set_period(sm->obj, sm->offcpu_period);
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
	sm->offcpu_period = PROFD_OFFCPU_PERIOD_NS;
	err = offcpu_pending__new(OFFCPU_PENDING, &sm->pend);
	if (!sm->unwind || err) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = bpfobj__add_consumer(o, &(struct bpfobj_consumer){.on_sample = on_sample,
								 .on_offcpu = on_offcpu,
								 .ctx = sm});
	if (err)
		goto cleanup;
	*out = sm;
	return 0;
cleanup:
	offcpu_pending__free(sm->pend);
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
	offcpu_pending__free(sm->pend);
	unwind__free(sm->unwind);
	free(sm);
}
