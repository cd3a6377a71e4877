// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpfobj: loads and owns the object, the process table and the filter maps; hands ring records
 * to the consumers registered with it (the contract: bpfobj.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <event2/event.h>

#include "bpf/abi/cpu.h"
#include "bpf/abi/heap.h"
#include "bpf/abi/offcpu.h"
#include "bpf/abi/targets.h"
#include "bpf/profd.skel.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/stagecpu.h"
#include "proc/pgexe.h"
#include "proc/pgwait.h"
#include "proc/procs.h"
#include "proc/procstat.h"
#include "proc/titles.h"
#include "tracer/bpfobj.h"
#include "tracer/kernel.h"
#include "tracer/stackcopy.h"
#include "tracer/cpurings.h"
#include "tracer/tgidbits.h"
#include "tracer/tracefs.h"

/*
 * Samples don't wake us: we drain on a timer, every DRAIN_MIN_MS while
 * samples come in, backing off to DRAIN_MAX_MS while few do (a quiet host
 * at 19 Hz: a wakeup costs more than the samples it reads).  Nothing that
 * needs the daemon at once waits for it: a process's first sample, an exec
 * and a ring a quarter full wake it.
 */
#define DRAIN_MIN_MS 100
#define DRAIN_MAX_MS 800
#define DRAIN_BUSY 16		/* samples in one timed drain: back to DRAIN_MIN_MS */
/*
 * How long one read of the rings may hold the event loop.  libbpf reads until
 * it finds the rings empty, so a consumer slower than the producers (a busy
 * emulated guest, a CPU quota, a fork storm) would never return: session
 * timers would not fire and requests would not be answered.  Past this, the
 * rest is read on the loop's next pass, after timers and requests had theirs.
 */
#define DRAIN_SLICE_NS (5 * 1000000LL)
/* bpfobj__drain(): a session's last samples, before its profile is built. */
#define DRAIN_FLUSH_NS (200 * 1000000LL)
#define DRAIN_CUT (-EAGAIN)	/* on_record's "stop here" */
#define PROCS_MAX 16384
#define MAX_CPUS 1024
#define LIBBPF_LOG_MAX 8192

struct bpfobj {
	struct event_base *base;
	struct profd_bpf *skel;
	struct ring_buffer *rb;		/* process events: these wake us */
	struct ring_buffer *rb_samples;	/* samples: read on a timer, or when a quarter full */
	struct event *rb_samples_ev;
	struct event *rb_ev;
	struct event *drain_ev;
	struct event *more_ev;	/* a cut read goes on from here, on the next pass */
	int64_t drain_until;	/* the read in progress stops at this time */
	unsigned drain_n;	/* records in the read in progress */
	int drain_ms;		/* the timer's interval now */
	uint64_t drain_cuts;
	struct bpf_link *links[5];	/* process tracepoints; [3], [4]: exit snapshots, optional */
	struct procs *procs;
	struct titles *titles;	/* sample labels from process titles */
	struct event *titles_ev;	/* reads the titles of forked processes, when armed */
	int64_t titles_due;	/* when titles_ev fires, if pending */
	struct stackcopy *copy;
	struct kernel_features feat;
	int cpus[MAX_CPUS];
	int ncpus;
	struct bpfobj_consumer consumers[BPFOBJ_MAX_CONSUMERS];
	int nconsumers;
	struct {
		bpfobj_exe_match_fn match;
		const void *ctx;
	} exe_filters[32];	/* by mask bit */
	uint32_t pid_bits;	/* bits with pid targets */
	struct tgidbits *bits;	/* tgid_bits, mapped; NULL: not */
	struct cpurings *cpurings;	/* small samples, a ring per CPU: read on the sample ring's terms */
	bool rings_first;	/* the next read takes cpurings before rb_samples */
	int whole;		/* whole-system consumers */
	bool lazy_procs;		/* forks and execs read at their first sample (targets.bpf.h) */
	struct stagecpu stages;	/* the loop thread's CPU, by enum bpfobj_stage */
	struct bpfobj_event_stats ev;
};

/* libbpf's messages: kept (the tail) to explain a failure, shown with
 * PROFD_DEBUG=1 (bpfobj_opts.libbpf_debug; libbpf's callback has no context). */
static char libbpf_log[LIBBPF_LOG_MAX];
static size_t libbpf_log_len;
static bool libbpf_debug;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	char line[1024];
	va_list copy;
	int n;

	if (libbpf_debug) {
		va_copy(copy, args);
		vfprintf(stderr, fmt, copy);
		va_end(copy);
	}
	/* Only the start of a message is kept: enough to tell what failed. */
	n = vsnprintf(line, sizeof(line), fmt, args);
	if (n < 0)
		return 0;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (libbpf_log_len + n >= LIBBPF_LOG_MAX)
		libbpf_log_len = 0;	/* keep the newest */
	memcpy(libbpf_log + libbpf_log_len, line, n);
	libbpf_log_len += n;
	libbpf_log[libbpf_log_len] = '\0';
	return 0;
}

static int parse_online_cpus(int *cpus, int max)
{
	char buf[4096], *p;
	int fd, n = 0;
	ssize_t len;

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

/*
 * The sample ring: a sample carries up to 32 KiB of stack (typically a few
 * KiB), and the kernel side wakes us when a quarter is used, besides the
 * timed drain.  256 KiB per CPU, at least 1 MiB, at most 64: a power of
 * two.  Every page of it is resident once the write position has been
 * round (and counted twice in RSS: the data pages are mapped twice), so it
 * is sized for what arrives between two drains, not more: two CPUs busy at
 * 999 Hz with a 2.3 KiB copy each lost no sample with a 256 KiB ring, and
 * 4 MiB cost 8.7 MiB of RSS against 1 MiB's 2.1 (docs/benchmarks.md).
 */
static __u32 ringbuf_size(int ncpus)
{
	__u32 size = 1u << 20;

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

/* ---- processes ---- */

void bpfobj__stack_need(struct bpfobj *o, int pid, uint64_t bytes, bool below_fp)
{
	stackcopy__need(o->copy, pid, bytes, below_fp);
}

void bpfobj__stack_used(struct bpfobj *o, int pid, uint64_t bytes)
{
	stackcopy__used(o->copy, pid, bytes);
}

void bpfobj__stack_stats(const struct bpfobj *o, struct stackcopy_stats *st)
{
	stackcopy__stats(o->copy, st);
}

/* Which registered consumers' executable filters match pid. */
static uint32_t exe_mask_of(struct bpfobj *o, int pid)
{
	struct proc_exe exe;
	uint32_t mask = 0;

	if (procs__exe(o->procs, pid, &exe))
		return 0;
	for (int bit = 0; bit < 32; bit++)
		if (o->exe_filters[bit].match && o->exe_filters[bit].match(o->exe_filters[bit].ctx, &exe))
			mask |= 1u << bit;
	return mask;
}

/* The kernel's count of pid's execs (procs.h: procs__set_seq_source). */
static uint32_t kernel_exec_seq(void *ctx, int pid)
{
	struct bpfobj *o = ctx;
	struct profd_proc_state st;
	__u32 key = pid;

	if (bpf_map_lookup_elem(bpf_map__fd(o->skel->maps.proc_state), &key, &st))
		return PROCS_SEQ_LATEST;
	return st.exec_seq;
}

/* Tell the kernel side what pid's executable makes it, for this generation. */
static void resolve_exe(struct bpfobj *o, int pid)
{
	struct profd_exe_state st = {.gen = o->skel->data->filter_gen};
	__u32 key = pid;

	st.mask = exe_mask_of(o, pid);
	bpf_map_update_elem(bpf_map__fd(o->skel->maps.exe_targets), &key, &st, BPF_ANY);
}

/* After exec: the executable's text, whose first sample says ld.so is done. */
static void set_run_range(struct bpfobj *o, int pid)
{
	const struct proc_maps *pm = procs__maps(o->procs, pid, PROCS_SEQ_LATEST);
	struct profd_text_range r = {~0ull, 0};
	struct proc_exe exe;
	__u32 key = pid;

	if (!pm || procs__exe(o->procs, pid, &exe))
		return;
	for (size_t i = 0; i < pm->n; i++) {
		if (strcmp(pm->m[i].path, exe.path))
			continue;
		if (pm->m[i].start < r.lo)
			r.lo = pm->m[i].start;
		if (pm->m[i].end > r.hi)
			r.hi = pm->m[i].end;
	}
	if (r.hi > r.lo)
		bpf_map_update_elem(bpf_map__fd(o->skel->maps.proc_run), &key, &r, BPF_ANY);
}

/*
 * Is comm a program whose title means labels (the kernel side's own list,
 * bpf/abi/targets.h)?  Its title area is wanted whether or not titles are
 * read at exit here: the same entry says where its wait event is, which
 * off-CPU profiles read at every switch-out (offcpu.bpf.c).  Before 6.16
 * no exit hook is taken by default, and tying the entry to one left
 * off-CPU profiles on Debian's 6.1 and the computes' 6.12 without
 * wait_event labels.
 */
static bool title_area_wanted(const char *comm)
{
	return !strcmp(comm, PROFD_TITLE_COMM_A) || !strcmp(comm, PROFD_TITLE_COMM_B);
}

/*
 * A postgres process (by its comm, the only processes whose titles mean
 * labels): tell the kernel side where its title lives, so that it reads
 * the title as the process, or any child it forks, exits (where an exit
 * hook is taken), and where its wait event is (off-CPU profiles).  The
 * address is /proc/PID/stat's arg_start: postgres rewrites its argument
 * area in place.
 */
static void write_title_area(struct bpfobj *o, int pid)
{
	struct profd_title_area ta = {0};
	uint64_t wait_addr = 0;
	uint32_t major = 0;
	struct procstat ps;
	__u32 key = pid;

	if (procstat__read("/proc", pid, &ps) || !ps.arg_start)
		return;
	ta.addr = ps.arg_start;
	/* Where its wait event is, for off-CPU profiles' wait_event label;
	 * a binary without the symbol has none (said in their comments). */
	if (!pgwait__info_addr("/proc", pid, &wait_addr, &major)) {
		ta.wait_addr = wait_addr;
		ta.pg_major = major;
	}
	if (bpf_map_update_elem(bpf_map__fd(o->skel->maps.title_area), &key, &ta, BPF_ANY))
		return;
	/* Once per postmaster found at start, per postgres exec or new
	 * process, and per parent first met at a fork (children inherit the
	 * area); tests wait for it. */
	if (ta.wait_addr)
		log__debug("postgres process %d: title at 0x%llx, wait event at 0x%llx (PostgreSQL %u)",
			   pid, (unsigned long long)ta.addr, (unsigned long long)ta.wait_addr, ta.pg_major);
	else
		log__debug("postgres process %d: title at 0x%llx, wait event unknown", pid,
			   (unsigned long long)ta.addr);
}

static void set_title_area(struct bpfobj *o, int pid, const char *comm)
{
	/* Only a postgres binary's titles are believed (proc/pgexe.h), so
	 * only its title is read at exit, and those of the children it forks. */
	if (title_area_wanted(comm) && pgexe__is_postgres("/proc", pid))
		write_title_area(o, pid);
}

/*
 * A postgres process forks: if the daemon never told the kernel side where
 * the parent's title lives (it was running before profd started, and has
 * not been sampled since), do it now, for the parent and for this child,
 * which the fork has already passed by.  One lookup per postgres fork; a
 * /proc read once per parent.
 */
static void fork_title_area(struct bpfobj *o, int ppid, int child, const char *comm)
{
	int fd = bpf_map__fd(o->skel->maps.title_area);
	struct profd_title_area ta;
	__u32 key = ppid;

	if (!title_area_wanted(comm))
		return;
	if (bpf_map_lookup_elem(fd, &key, &ta) == 0)
		return;
	set_title_area(o, ppid, comm);
	if (bpf_map_lookup_elem(fd, &key, &ta))
		return;
	ta.flags = PROFD_TA_FORKED;
	key = child;
	/* BPF_NOEXIST: the child may have exec'd or exited already. */
	bpf_map_update_elem(fd, &key, &ta, BPF_NOEXIST);
}

/*
 * The postmasters already running when the daemon starts: their title areas
 * now, so that every backend they fork inherits one at its fork, in the
 * kernel.  Otherwise a postmaster started before profd got one only when
 * it, or one of its new children, was first sampled: until then its
 * short-lived backends exited without their titles, and their first
 * off-CPU switches without wait events.  One /proc listing at start.
 */
#define TITLE_SCAN_MAX 64

static void title_areas_at_start(struct bpfobj *o)
{
	int pids[TITLE_SCAN_MAX];
	int n = pgexe__postmasters("/proc", pids, TITLE_SCAN_MAX);

	/* Each believed already (pgexe__postmasters asks pgexe__is_postgres). */
	for (int i = 0; i < n; i++)
		write_title_area(o, pids[i]);
}

/*
 * What each kind of process event costs, estimated from one event in
 * EV_MEASURE_EVERY of each kind: a thread-CPU clock read is a system call
 * (1-2 us on a VM, as much as a fork's whole handling), so reading it
 * around every event would double what events cost.  The process-event
 * ring as a whole is one stage (drain()), timed exactly.
 */
#define EV_MEASURE_EVERY 16

static int64_t ev_begin(struct bpfobj *o, enum bpfobj_event kind)
{
	return o->ev.count[kind]++ % EV_MEASURE_EVERY ? -1 : clock__thread_cpu_ns();
}

static void ev_end(struct bpfobj *o, enum bpfobj_event kind, int64_t t0)
{
	int64_t now;

	if (t0 < 0)
		return;
	now = clock__thread_cpu_ns();
	if (now > t0)
		o->ev.cpu_ns[kind] += (uint64_t)(now - t0) * EV_MEASURE_EVERY;
}

static void on_title_event(struct bpfobj *o, const struct profd_title_event *e)
{
	char comm[PROFD_COMM_LEN + 1];
	int64_t t0 = ev_begin(o, BPFOBJ_EV_TITLE);

	memcpy(comm, e->comm, PROFD_COMM_LEN);
	comm[PROFD_COMM_LEN] = '\0';
	if (e->flags & PROFD_TE_LIVE)
		titles__live_title(o->titles, e->pid, comm, e->title, sizeof(e->title),
				   e->flags & PROFD_TA_FORKED, (int64_t)e->ktime);
	else
		titles__exit_title(o->titles, e->pid, comm, e->title, sizeof(e->title),
				   e->flags & PROFD_TA_FORKED, (int64_t)e->ktime);
	ev_end(o, BPFOBJ_EV_TITLE, t0);
}

/* titles_ev fires by due_ns (-1: nothing due). */
static void titles_arm(struct bpfobj *o, int64_t due_ns, int64_t now_ns)
{
	int64_t wait = due_ns > now_ns ? due_ns - now_ns : 0;
	struct timeval tv = {wait / 1000000000, (wait % 1000000000) / 1000};

	if (due_ns < 0 || (evtimer_pending(o->titles_ev, NULL) && o->titles_due <= due_ns))
		return;
	o->titles_due = due_ns;
	evtimer_add(o->titles_ev, &tv);
}

static void on_titles_due(evutil_socket_t fd, short what, void *arg)
{
	struct bpfobj *o = arg;
	int64_t now = clock__mono_ns();

	stagecpu__enter(&o->stages, BPFOBJ_STAGE_TITLES);
	titles_arm(o, titles__poll(o->titles, now), now);
	stagecpu__leave(&o->stages);
}

/*
 * The titles side of a forked child, told of at its fork (FORK) or at its
 * first sample (FIRST): whatever was known of its pid is another
 * process's, and it inherits where a postgres parent keeps its title.
 * Where the kernel side does not report titles at exit_group, its title is
 * read soon, since a short-lived one is gone before its samples are
 * drained; where it does, a fork costs no read at all.
 */
static void forked(struct bpfobj *o, const struct profd_proc_event *e, const char *comm)
{
	int64_t now;

	titles__stale(o->titles, e->pid, (int64_t)e->ktime);
	fork_title_area(o, e->ppid, e->pid, comm);
	if (!o->feat.exit_snapshots) {
		now = clock__mono_ns();
		titles__watch(o->titles, e->pid, now);
		titles_arm(o, now + TITLES_WATCH_FIRST_NS, now);
	}
}

static void on_proc_event(struct bpfobj *o, const struct profd_proc_event *e)
{
	char comm[PROFD_COMM_LEN + 1];
	/* enum bpfobj_event lists the reasons in their order, after TITLE. */
	enum bpfobj_event kind = BPFOBJ_EV_NEW + e->reason - PROFD_PROC_NEW;
	int64_t t0;
	int err = 0;

	if (e->reason < PROFD_PROC_NEW || e->reason > PROFD_PROC_FIRST)
		return;
	t0 = ev_begin(o, kind);
	memcpy(comm, e->comm, PROFD_COMM_LEN);
	comm[PROFD_COMM_LEN] = '\0';
	switch (e->reason) {
	case PROFD_PROC_FORK:
		/* Failing to read a process that already exited is normal. */
		err = procs__snapshot(o->procs, e->pid, e->ppid, comm, e->exec_seq);
		forked(o, e, comm);
		break;
	case PROFD_PROC_FIRST:
		if (e->ppid) {
			/* Forked, not reported then, sampled now: its code is
			 * its parent's when the parent is known (a postgres
			 * backend: no read at all), else its own, read now. */
			if (procs__maps_known(o->procs, e->ppid, PROCS_SEQ_LATEST) ||
			    (err = procs__snapshot(o->procs, e->pid, 0, comm, e->exec_seq)))
				err = procs__snapshot(o->procs, e->pid, e->ppid, comm, e->exec_seq);
			forked(o, e, comm);
			break;
		}
		/* Exec'd, not reported then, sampled now. */
		/* fall through */
	case PROFD_PROC_EXEC:
		err = procs__snapshot(o->procs, e->pid, 0, comm, e->exec_seq);
		if (!err)
			procs__provisional(o->procs, e->pid);
		titles__stale(o->titles, e->pid, (int64_t)e->ktime);
		if (!o->lazy_procs)
			resolve_exe(o, e->pid);
		set_run_range(o, e->pid);
		stackcopy__exec(o->copy, e->pid);
		/* A postmaster's children inherit where its title lives. */
		set_title_area(o, e->pid, comm);
		break;
	case PROFD_PROC_NEW:
		/* Whatever we held for this pid may be another process's. */
		err = procs__snapshot(o->procs, e->pid, 0, comm, e->exec_seq);
		titles__stale(o->titles, e->pid, (int64_t)e->ktime);
		resolve_exe(o, e->pid);
		stackcopy__exec(o->copy, e->pid);
		set_title_area(o, e->pid, comm);
		break;
	case PROFD_PROC_RUN:
		err = procs__snapshot(o->procs, e->pid, 0, comm, e->exec_seq);
		break;
	case PROFD_PROC_EXIT:
		procs__exited(o->procs, e->pid);
		titles__exited(o->titles, e->pid, clock__mono_ns());
		break;
	}
	log__debug("process %u (reason %u, parent %u, %s): maps %s after %.3f ms", e->pid,
		   e->reason, e->ppid, comm, err ? strerror(-err) : "read",
		   (clock__mono_ns() - (int64_t)e->ktime) / 1e6);
	for (int i = 0; i < o->nconsumers; i++)
		if (o->consumers[i].on_proc)
			o->consumers[i].on_proc(o->consumers[i].ctx, e);
	ev_end(o, kind, t0);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct bpfobj *o = ctx;
	const __u32 *type = data;

	if (size < sizeof(*type))
		return 0;
	switch (*type) {
	case PROFD_EV_PROC:
		if (size >= sizeof(struct profd_proc_event))
			on_proc_event(o, data);
		break;
	case PROFD_EV_TITLE:
		if (size >= sizeof(struct profd_title_event))
			on_title_event(o, data);
		break;
	case PROFD_EV_WAKE:	/* its work is done: the ring's epoll woke us */
		return 0;
	case PROFD_EV_OFFCPU:
		if (size < sizeof(struct profd_offcpu_end))
			break;
		for (int i = 0; i < o->nconsumers; i++)
			if (o->consumers[i].on_offcpu)
				o->consumers[i].on_offcpu(o->consumers[i].ctx, data);
		return 0;
	case PROFD_EV_SAMPLE:
		if (size < sizeof(struct profd_sample))
			break;
		for (int i = 0; i < o->nconsumers; i++)
			if (o->consumers[i].on_sample)
				o->consumers[i].on_sample(o->consumers[i].ctx, data, size);
		/* The clock is read every 32 samples; a process event (maps to
		 * read) can take a while, so after each of those. */
		if (++o->drain_n % 32)
			return 0;
		break;
	}
	/* libbpf has consumed this record already: stopping loses nothing. */
	return clock__mono_ns() >= o->drain_until ? DRAIN_CUT : 0;
}

/* Process events first, for at most half the budget; then samples, for the
 * rest.  A read cut short goes on at the loop's next pass. */
static void drain(struct bpfobj *o, int64_t budget_ns)
{
	int64_t start = clock__mono_ns();
	bool cut;

	if (!o->rb || !o->rb_samples || !o->cpurings)
		return;
	stagecpu__enter(&o->stages, BPFOBJ_STAGE_DRAIN);
	o->drain_until = start + budget_ns / 2;
	o->drain_n = 0;
	stagecpu__enter(&o->stages, BPFOBJ_STAGE_PROC_EVENTS);
	cut = ring_buffer__consume(o->rb) == DRAIN_CUT;
	stagecpu__leave(&o->stages);
	o->drain_until = start + budget_ns;
	o->drain_n = 0;
	/* Small samples (the per-CPU rings) and the rest (full copies,
	 * off-CPU), first one then the other by turns: a read cut short
	 * under a flood of one leaves the other first the next time. */
	o->rings_first = !o->rings_first;
	if (o->rings_first)
		cut |= cpurings__consume(o->cpurings, on_record, o) == DRAIN_CUT;
	cut |= ring_buffer__consume(o->rb_samples) == DRAIN_CUT;
	if (!o->rings_first)
		cut |= cpurings__consume(o->cpurings, on_record, o) == DRAIN_CUT;
	stagecpu__leave(&o->stages);
	if (cut) {
		struct timeval now = {0, 0};

		o->drain_cuts++;
		/* A zero timeout, not event_active(): an active event re-activated
		 * in its own callback runs again before the loop looks at timers. */
		evtimer_add(o->more_ev, &now);
	}
}

void bpfobj__drain(struct bpfobj *o)
{
	drain(o, DRAIN_FLUSH_NS);
}

uint64_t bpfobj__drain_cuts(const struct bpfobj *o)
{
	return o->drain_cuts;
}

uint64_t bpfobj__ring_bad_records(const struct bpfobj *o)
{
	return cpurings__bad(o->cpurings);
}

void bpfobj__event_stats(const struct bpfobj *o, struct bpfobj_event_stats *st)
{
	*st = o->ev;
}

_Static_assert(BPFOBJ_EV_FORK - BPFOBJ_EV_NEW == PROFD_PROC_FORK - PROFD_PROC_NEW &&
		       BPFOBJ_EV_EXIT - BPFOBJ_EV_NEW == PROFD_PROC_EXIT - PROFD_PROC_NEW &&
		       BPFOBJ_EV_FIRST - BPFOBJ_EV_NEW == PROFD_PROC_FIRST - PROFD_PROC_NEW,
	       "enum bpfobj_event follows enum profd_proc_reason");

struct stagecpu *bpfobj__stagecpu(struct bpfobj *o)
{
	return &o->stages;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	drain(arg, DRAIN_SLICE_NS);
}

static void drain_timer_arm(struct bpfobj *o)
{
	struct timeval tv = {o->drain_ms / 1000, (o->drain_ms % 1000) * 1000};

	evtimer_add(o->drain_ev, &tv);
}

static void on_drain_timer(evutil_socket_t fd, short what, void *arg)
{
	struct bpfobj *o = arg;

	drain(o, DRAIN_SLICE_NS);
	/* drain_n: the samples that drain read. */
	if (o->drain_n >= DRAIN_BUSY)
		o->drain_ms = DRAIN_MIN_MS;
	else if (o->drain_ms < DRAIN_MAX_MS)
		o->drain_ms = o->drain_ms * 2 < DRAIN_MAX_MS ? o->drain_ms * 2 : DRAIN_MAX_MS;
	drain_timer_arm(o);
}

/* ---- target filters ---- */

int bpfobj__pid_set(struct bpfobj *o, int pid, uint32_t bit)
{
	int fd = bpf_map__fd(o->skel->maps.pid_targets);
	__u32 key = pid, mask = 0;

	o->pid_bits |= bit;
	o->skel->bss->inherit_mask = o->pid_bits;
	/* The bit before the entry: an entry without it would be missed. */
	tgidbits__set(o->bits, PROFD_TGID_TARGET, pid);
	bpf_map_lookup_elem(fd, &key, &mask);
	mask |= bit;
	if (bpf_map_update_elem(fd, &key, &mask, BPF_ANY))
		return -errno;
	/* Its mappings, while it is surely alive. */
	procs__snapshot(o->procs, pid, 0, NULL, PROCS_SEQ_LATEST);
	return 0;
}

struct clear_bit {
	int fd;
	uint32_t bit;
};

static int clear_bit(const void *key, const void *value, void *ctx)
{
	const struct clear_bit *c = ctx;
	__u32 mask = *(const __u32 *)value;

	if (!(mask & c->bit))
		return 0;
	mask &= ~c->bit;
	if (mask)
		bpf_map_update_elem(c->fd, key, &mask, BPF_EXIST);
	else
		bpf_map_delete_elem(c->fd, key);
	return 0;
}

void bpfobj__pid_clear_all(struct bpfobj *o, uint32_t bit)
{
	struct clear_bit c = {bpf_map__fd(o->skel->maps.pid_targets), bit};

	/* First stop forks from handing the bit down, then take it back. */
	o->pid_bits &= ~bit;
	o->skel->bss->inherit_mask = o->pid_bits;
	bpfobj__map_each(c.fd, sizeof(__u32), sizeof(__u32), clear_bit, &c);
}

/*
 * Forks and execs may wait for the process's first sample unless something
 * needs to hear of them at once: an executable filter (is it a target?) or
 * a consumer of process events (heap tracking probes allocators).
 */
static void lazy_procs_update(struct bpfobj *o)
{
	bool lazy = !o->skel->bss->exe_filters;

	for (int i = 0; i < o->nconsumers; i++)
		lazy &= !o->consumers[i].on_proc;
	o->lazy_procs = lazy;
	o->skel->bss->lazy_procs = lazy;
}

static void exe_filters_changed(struct bpfobj *o)
{
	int n = 0;

	for (int bit = 0; bit < 32; bit++)
		n += o->exe_filters[bit].match != NULL;
	o->skel->bss->exe_filters = n;
	lazy_procs_update(o);
	/* Every resolved process is stale now: the kernel side asks again. */
	o->skel->data->filter_gen++;
}

int bpfobj__exe_register(struct bpfobj *o, uint32_t bit, bpfobj_exe_match_fn match,
			 const void *ctx)
{
	if (!bit || (bit & (bit - 1)) || !match)
		return -EINVAL;
	o->exe_filters[__builtin_ctz(bit)].match = match;
	o->exe_filters[__builtin_ctz(bit)].ctx = ctx;
	exe_filters_changed(o);
	return 0;
}

void bpfobj__exe_unregister(struct bpfobj *o, uint32_t bit)
{
	if (!bit || !o->exe_filters[__builtin_ctz(bit)].match)
		return;
	o->exe_filters[__builtin_ctz(bit)].match = NULL;
	exe_filters_changed(o);
}

void bpfobj__whole_system(struct bpfobj *o, int delta)
{
	o->whole += delta;
	o->skel->bss->report_all = o->whole > 0;
}

bool bpfobj__exe_matches(struct bpfobj *o, uint32_t bit, int pid)
{
	return bit && (exe_mask_of(o, pid) & bit);
}

uint32_t bpfobj__pid_mask(struct bpfobj *o, int pid)
{
	__u32 key = pid, mask = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(o->skel->maps.pid_targets), &key, &mask))
		return 0;
	return mask;
}

int bpfobj__map_each(int map_fd, size_t key_size, size_t value_size, bpfobj_entry_fn fn,
		     void *ctx)
{
	enum { BATCH = 256 };
	char *keys = malloc(BATCH * key_size), *values = malloc(BATCH * value_size);
	__u64 out_batch;	/* hash maps' batch cursor is 4 bytes; room for more */
	void *in = NULL;
	int err = 0, r;

	if (!keys || !values) {
		err = -ENOMEM;
		goto cleanup;
	}
	do {
		__u32 count = BATCH;

		r = bpf_map_lookup_batch(map_fd, in, &out_batch, keys, values, &count, NULL);
		if (r && errno != ENOENT) {
			err = -errno;
			break;
		}
		for (__u32 i = 0; !err && i < count; i++)
			err = fn(keys + i * key_size, values + i * value_size, ctx);
		in = &out_batch;
	} while (!r && !err);
cleanup:
	free(keys);
	free(values);
	return err;
}

int bpfobj__percpu_sum(int map_fd, uint32_t first, size_t n, uint64_t *sums)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *vals;

	memset(sums, 0, n * sizeof(*sums));
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		__u32 key = first + k;

		if (bpf_map_lookup_elem(map_fd, &key, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			sums[k] += vals[c];
	}
	free(vals);
	return 0;
}

void bpfobj__percpu_zero(int map_fd, uint32_t first, size_t n)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *zeros = calloc(ncpu > 0 ? ncpu : 1, sizeof(*zeros));

	if (!zeros)
		return;
	for (size_t k = 0; k < n; k++) {
		__u32 key = first + k;

		bpf_map_update_elem(map_fd, &key, zeros, BPF_ANY);
	}
	free(zeros);
}

/* ---- lifetime ---- */

int bpfobj__parse_exit_hook(const char *s)
{
	static const char *const names[] = {
		[BPFOBJ_EXIT_AUTO] = "auto",
		[BPFOBJ_EXIT_SYSCALL] = "exit_group",
		[BPFOBJ_EXIT_OFF] = "off",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -EINVAL;
}

int bpfobj__open(struct event_base *base, const struct bpfobj_opts *opts, struct bpfobj **out)
{
	struct bpfobj *o;
	bool early, syscall_hook;
	__u32 ring;
	int err;

	libbpf_debug = opts->libbpf_debug;
	libbpf_set_print(libbpf_print);
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->base = base;
	kernel__probe(&o->feat, opts->heap_probes_uprobe);
	err = parse_online_cpus(o->cpus, MAX_CPUS);
	if (err < 0) {
		log__error("cannot read /sys/devices/system/cpu/online: %s", strerror(-err));
		goto cleanup;
	}
	o->ncpus = err;
	err = kernel__check();
	if (err)
		goto cleanup;

	o->skel = profd_bpf__open();
	if (!o->skel) {
		err = -errno;
		log__error("cannot open the BPF object: %s", strerror(-err));
		goto cleanup;
	}
	err = kernel__tp_offsets((struct profd_tp_offsets *)&o->skel->rodata->tp_off);
	if (err)
		goto cleanup;
	ring = ringbuf_size(o->ncpus);
	if (opts->ring_kb >= 64 && opts->ring_kb <= (1 << 20) &&
	    !(opts->ring_kb & (opts->ring_kb - 1)))
		ring = (__u32)opts->ring_kb << 10;
	bpf_map__set_max_entries(o->skel->maps.events, ring);
	/* Before the consumers' prepares: offcpu_waiting is sized by it too. */
	o->skel->rodata->tid_words = kernel__tid_words();
	bpf_map__set_max_entries(o->skel->maps.tgid_bits,
				 PROFD_TGID_NR * o->skel->rodata->tid_words);
	o->skel->rodata->wakeup_bytes = ring / 4;
	/* Indexed by CPU number, which runs to the possible CPUs, not only the
	 * online ones (a hotplugged CPU samples too). */
	err = libbpf_num_possible_cpus();
	if (err <= 0) {
		err = err ? err : -EINVAL;
		log__error("cannot count the possible CPUs: %s", strerror(-err));
		goto cleanup;
	}
	bpf_map__set_max_entries(o->skel->maps.cpu_rings, (__u32)err);
	/* A knob for measuring what the stack copy costs (docs/benchmarks.md). */
	/* bench/kernel_pieces.sh: samples stop after one piece (cpu.bpf.c). */
	if (opts->bench_cut_set)
		o->skel->rodata->bench_cut = opts->bench_cut & 7;
	if (opts->stack_max_set)
		o->skel->rodata->stack_max = opts->stack_max & (PROFD_STACK_MAX * 2 - 1);
	o->skel->rodata->user_addr_mask = opts->user_addr_mask;
	fill_exp_table(o->skel->rodata->exp_table, PROFD_EXP_TABLE);
	for (int i = 0; i < BPFOBJ_MAX_PREPARE; i++)
		if (opts->prepare[i].fn)
			opts->prepare[i].fn(o->skel, &o->feat, opts->prepare[i].ctx);
	/* Exit snapshots and titles at exit: at sched_process_exit where it
	 * comes before exit_mm() (6.16+, the kernels whose record has
	 * group_dead); at the exit_group syscall only on request (cpu.bpf.c). */
	early = o->skel->rodata->tp_off.exit_group_dead != 0 && opts->exit_hook == BPFOBJ_EXIT_AUTO;
	syscall_hook = opts->exit_hook == BPFOBJ_EXIT_SYSCALL;
	bpf_program__set_autoload(o->skel->progs.profd_exit_early, early);
	bpf_program__set_autoload(o->skel->progs.profd_exit_group, syscall_hook);
	libbpf_log_len = 0;
	libbpf_log[0] = '\0';
	err = profd_bpf__load(o->skel);
	if (err) {
		kernel__explain_load_error(err, libbpf_log);
		goto cleanup;
	}
	/* Without the mapping every process is looked up, as before the bits:
	 * slower, the same answers. */
	o->bits = tgidbits__map(bpf_map__fd(o->skel->maps.tgid_bits), o->skel->rodata->tid_words);
	o->skel->bss->tgid_bits_on = o->bits != NULL;
	o->cpurings = cpurings__map(bpf_map__fd(o->skel->maps.cpu_rings),
				    bpf_map__max_entries(o->skel->maps.cpu_rings));
	if (!o->cpurings) {
		err = -errno;
		goto cleanup;
	}
	o->links[0] = bpf_program__attach(o->skel->progs.profd_newtask);
	o->links[1] = bpf_program__attach(o->skel->progs.profd_exec);
	o->links[2] = bpf_program__attach(o->skel->progs.profd_exit);
	for (int i = 0; i < 3; i++) {
		if (!o->links[i]) {
			err = -errno;
			log__error("attaching to the process tracepoints failed: %s",
				   strerror(-err));
			goto cleanup;
		}
	}
	/* Exit snapshots need the snapshots' slots freed at sched_process_free;
	 * without them, samples of a process tearing down its address space
	 * have no user stack. */
	if (o->skel->rodata->tp_off.free_pid) {
		o->links[4] = bpf_program__attach(o->skel->progs.profd_task_free);
		/* Before the snapshots start: profd_exit then leaves what they
		 * read to profd_task_free. */
		o->skel->bss->exit_early = early && o->links[4];
		if (o->links[4] && (early || syscall_hook))
			o->links[3] = bpf_program__attach(early ? o->skel->progs.profd_exit_early
								: o->skel->progs.profd_exit_group);
	}
	o->feat.exit_snapshots = o->links[3] != NULL;
	o->feat.exit_syscall_tp = o->links[3] && syscall_hook;
	o->skel->bss->state_at_free = o->links[4] != NULL;
	/* Titles come at exit: forks and exits need not wake us. */
	o->skel->bss->lazy_events = o->feat.exit_snapshots;
	lazy_procs_update(o);
	if (syscall_hook && !o->links[3])
		log__info("no syscalls:sys_enter_exit_group tracepoint (CONFIG_FTRACE_SYSCALLS): "
			  "samples of exiting processes will lack user stacks");
	else if (syscall_hook)
		log__info("exit snapshots at syscalls:sys_enter_exit_group (exit_hook exit_group): "
			  "while profd runs, every syscall on the machine takes the kernel's traced "
			  "path (docs/benchmarks.md)");
	else if (opts->exit_hook == BPFOBJ_EXIT_AUTO && !early)
		log__info("no exit snapshots: before 6.16 they need the exit_group syscall "
			  "tracepoint, which every syscall on the machine pays for (\"exit_hook\": "
			  "\"exit_group\" in the config takes that); samples of exiting processes "
			  "lack user stacks, and short-lived processes' titles are read after "
			  "their forks");
	/* Two readers, not one with both rings: each gets its share of a read
	 * (drain()), so a flood of process events cannot starve samples. */
	o->rb = ring_buffer__new(bpf_map__fd(o->skel->maps.proc_events), on_record, o, NULL);
	o->rb_samples = ring_buffer__new(bpf_map__fd(o->skel->maps.events), on_record, o, NULL);
	o->procs = procs__new(PROCS_MAX);
	if (o->procs)
		procs__set_seq_source(o->procs, kernel_exec_seq, o);
	o->titles = titles__new("/proc", TITLES_MAX, TITLES_REREAD_NS);
	o->copy = o->procs ? stackcopy__new(bpf_map__fd(o->skel->maps.proc_copy), o->bits, o->procs,
					     o->skel->rodata->stack_max)
			   : NULL;
	if (!o->rb || !o->rb_samples || !o->procs || !o->titles || !o->copy) {
		err = -ENOMEM;
		log__error("out of memory setting up the BPF side");
		goto cleanup;
	}
	o->rb_ev = event_new(base, ring_buffer__epoll_fd(o->rb), EV_READ | EV_PERSIST, on_readable,
			     o);
	/* The sample ring wakes us only when a quarter full (wakeup_bytes). */
	o->rb_samples_ev = event_new(base, ring_buffer__epoll_fd(o->rb_samples),
				     EV_READ | EV_PERSIST, on_readable, o);
	o->drain_ev = evtimer_new(base, on_drain_timer, o);
	o->drain_ms = DRAIN_MIN_MS;
	o->more_ev = evtimer_new(base, on_readable, o);
	o->titles_ev = evtimer_new(base, on_titles_due, o);
	if (!o->rb_ev || !o->rb_samples_ev || !o->drain_ev || !o->more_ev || !o->titles_ev ||
	    event_add(o->rb_ev, NULL) || event_add(o->rb_samples_ev, NULL)) {
		err = -ENOMEM;
		goto cleanup;
	}
	drain_timer_arm(o);
	title_areas_at_start(o);
	*out = o;
	return 0;
cleanup:
	bpfobj__free(o);
	return err;
}

void bpfobj__free(struct bpfobj *o)
{
	if (!o)
		return;
	if (o->rb_ev)
		event_free(o->rb_ev);
	if (o->rb_samples_ev)
		event_free(o->rb_samples_ev);
	if (o->drain_ev)
		event_free(o->drain_ev);
	if (o->more_ev)
		event_free(o->more_ev);
	if (o->titles_ev)
		event_free(o->titles_ev);
	ring_buffer__free(o->rb);
	ring_buffer__free(o->rb_samples);
	tgidbits__free(o->bits);
	cpurings__free(o->cpurings);
	for (int i = 0; i < 5; i++)
		bpf_link__destroy(o->links[i]);
	profd_bpf__destroy(o->skel);
	stackcopy__free(o->copy);
	procs__free(o->procs);
	titles__free(o->titles);
	free(o);
}

struct profd_bpf *bpfobj__skel(struct bpfobj *o)
{
	return o->skel;
}

struct titles *bpfobj__titles(struct bpfobj *o)
{
	return o->titles;
}

struct procs *bpfobj__procs(struct bpfobj *o)
{
	return o->procs;
}

const struct kernel_features *bpfobj__features(const struct bpfobj *o)
{
	return &o->feat;
}

int bpfobj__ncpus(const struct bpfobj *o)
{
	return o->ncpus;
}

const int *bpfobj__cpus(const struct bpfobj *o)
{
	return o->cpus;
}

int bpfobj__add_consumer(struct bpfobj *o, const struct bpfobj_consumer *c)
{
	if (o->nconsumers == BPFOBJ_MAX_CONSUMERS)
		return -ENOSPC;
	o->consumers[o->nconsumers++] = *c;
	lazy_procs_update(o);
	return 0;
}

void bpfobj__remove_consumer(struct bpfobj *o, void *ctx)
{
	for (int i = 0; i < o->nconsumers; i++) {
		if (o->consumers[i].ctx != ctx)
			continue;
		memmove(&o->consumers[i], &o->consumers[i + 1],
			(o->nconsumers - i - 1) * sizeof(o->consumers[0]));
		o->nconsumers--;
		lazy_procs_update(o);
		return;
	}
}
