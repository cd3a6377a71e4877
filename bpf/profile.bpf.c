// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * profd's CPU sampler.  One perf_event program is attached to a cpu-clock
 * event per online CPU per session; the attach cookie is the session slot,
 * so sessions with different frequencies and targets share one program.
 *
 * Filtering happens before any stack is taken.  Each process has a cached
 * profd_proc entry saying which sessions target it: by pid (set by the
 * daemon, inherited across fork) or by executable (computed here from
 * mm->exe_file, recomputed lazily when the daemon bumps filter_gen).
 *
 * Samples stream to user space through one ring buffer rather than being
 * aggregated here: it keeps per-sample cost at one stack walk plus a copy,
 * never fills a stack map, and lets sessions start and end without
 * touching shared kernel state (see docs/architecture.md for the figures).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "profile.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define PF_KTHREAD 0x00200000

/* Bumped by the daemon whenever exe filters change. */
volatile __u32 filter_gen = 1;
/* Sessions with PROFD_SESSION_ALL running: processes must be reported. */
volatile __u32 all_sessions;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/*
 * Process events have their own small ring, which the daemon drains before
 * samples: a process that lives 20 ms must not wait behind a backlog.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} proc_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROFD_MAX_SESSIONS);
	__type(key, __u32);
	__type(value, struct profd_session_cfg);
} sessions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFD_MAX_SESSIONS * PROFD_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROFD_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct profd_proc);
} procs SEC(".maps");

/* Value: mask of sessions targeting that executable. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct profd_exe_key);
	__type(value, __u32);
} exe_inodes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct profd_exe_name);
	__type(value, __u32);
} exe_names SEC(".maps");

/* Scratch for the name key: too big to build on the 512-byte stack twice. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct profd_exe_name);
} name_scratch SEC(".maps");

static __always_inline void stat_inc(__u32 session, __u32 stat)
{
	__u32 key = session * PROFD_STAT_NR + stat;
	__u64 *v = bpf_map_lookup_elem(&stats, &key);

	if (v)
		(*v)++;	/* per-CPU: no atomic needed */
}

/* Which sessions target the executable of task: by inode, then by name. */
static __always_inline __u32 exe_mask_of(struct task_struct *task)
{
	struct file *exe = BPF_CORE_READ(task, mm, exe_file);
	struct profd_exe_key key = {};
	struct profd_exe_name *name;
	__u32 zero = 0, mask = 0, *m;
	struct inode *inode;
	const unsigned char *dname;

	if (!exe)
		return 0;
	inode = BPF_CORE_READ(exe, f_inode);
	key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	key.ino = BPF_CORE_READ(inode, i_ino);
	m = bpf_map_lookup_elem(&exe_inodes, &key);
	if (m)
		mask |= *m;

	name = bpf_map_lookup_elem(&name_scratch, &zero);
	if (!name)
		return mask;
	__builtin_memset(name, 0, sizeof(*name));
	dname = BPF_CORE_READ(exe, f_path.dentry, d_name.name);
	bpf_probe_read_kernel_str(name->name, sizeof(name->name), dname);
	m = bpf_map_lookup_elem(&exe_names, name);
	if (m)
		mask |= *m;
	return mask;
}

static __always_inline void proc_event(__u32 reason, __u32 pid, __u32 ppid)
{
	struct profd_proc_event *e;

	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e)
		return;
	e->type = PROFD_EV_PROC;
	e->reason = reason;
	e->pid = pid;
	e->ppid = ppid;
	e->ktime = bpf_ktime_get_ns();
	/* The daemon must read /proc/PID/maps while the process lives. */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/*
 * Is the task running its executable's own code?  After exec, ld.so maps
 * the libraries before it jumps to the program, so from then on the
 * mappings are worth reading.
 */
static __always_inline bool in_main_text(struct task_struct *task)
{
	struct pt_regs *uregs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u64 ip = BPF_CORE_READ(uregs, ip);
	struct mm_struct *mm = BPF_CORE_READ(task, mm);

	return ip >= BPF_CORE_READ(mm, start_code) && ip < BPF_CORE_READ(mm, end_code);
}

/*
 * The cached target state of the current process, created or refreshed as
 * needed.  Returns NULL only when the table is full.
 */
static __always_inline struct profd_proc *current_proc(__u32 tgid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
	struct profd_proc *p, fresh = {};
	__u32 gen = filter_gen;

	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p) {
		if (p->gen != gen) {
			p->exe_mask = exe_mask_of(task);
			p->gen = gen;
		}
		if (p->need_maps && in_main_text(task)) {
			p->need_maps = 0;
			proc_event(PROFD_PROC_RUN, tgid, 0);
		}
		return p;
	}
	fresh.exe_mask = exe_mask_of(task);
	fresh.gen = gen;
	if (bpf_map_update_elem(&procs, &tgid, &fresh, BPF_NOEXIST) &&
	    bpf_map_update_elem(&procs, &tgid, &fresh, BPF_ANY))
		return NULL;
	/* Only targets' mappings are worth reading; kernel threads have none. */
	if ((fresh.exe_mask || all_sessions) && !(BPF_CORE_READ(task, flags) & PF_KTHREAD))
		proc_event(PROFD_PROC_NEW, tgid, BPF_CORE_READ(task, real_parent, tgid));
	return bpf_map_lookup_elem(&procs, &tgid);
}

/*
 * Was the sample taken in user mode?  Then there is no kernel stack to
 * walk.  pt_regs.cs is read as the 8-byte slot the context allows.
 */
static __always_inline bool user_mode(struct bpf_perf_event_data *ctx)
{
	__u64 cs = *(__u64 *)((char *)ctx + __builtin_offsetof(struct bpf_perf_event_data, regs) +
			      __builtin_offsetof(struct pt_regs, cs));

	return (cs & 3) == 3;
}

/*
 * Walk the user stack by frame pointers, from the registers the task
 * entered the kernel with.  Done here rather than with bpf_get_stack():
 * perf's callchain machinery (per-CPU entry, context markers, zeroing the
 * rest of the buffer) cost about 0.6 us per sample on this VM, more than
 * the walk itself.  Returns bytes stored in s->ustack.
 */
static __always_inline __s32 walk_user(struct task_struct *task, struct profd_sample *s, __u32 slot)
{
	struct pt_regs *uregs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u64 fp = BPF_CORE_READ(uregs, bp), frame[2];
	int i;

	if (bpf_probe_read_user(s->sp_words, sizeof(s->sp_words), (void *)BPF_CORE_READ(uregs, sp)))
		__builtin_memset(s->sp_words, 0, sizeof(s->sp_words));
	s->ustack[0] = BPF_CORE_READ(uregs, ip);
	for (i = 1; i < PROFD_MAX_STACK; i++) {
		/* frame[0]: the caller's frame pointer; frame[1]: return address. */
		if (!fp)
			break;
		if (bpf_probe_read_user(frame, sizeof(frame), (void *)fp)) {
			stat_inc(slot, PROFD_STAT_ERR_USTACK);
			break;
		}
		if (!frame[1])
			break;
		s->ustack[i] = frame[1];
		/* Stacks grow down: a caller's frame is higher, or the chain is broken. */
		if (frame[0] <= fp) {
			i++;
			break;
		}
		fp = frame[0];
	}
	return i * sizeof(__u64);
}

SEC("perf_event")
int profd_sample(struct bpf_perf_event_data *ctx)
{
	__u32 slot = bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct profd_session_cfg *cfg;
	struct task_struct *task;
	struct profd_sample *s;
	struct profd_proc *p;
	long n = 0;

	if (tgid == 0)	/* the idle task */
		return 0;
	cfg = bpf_map_lookup_elem(&sessions, &slot);
	if (!cfg || !(cfg->flags & PROFD_SESSION_ACTIVE))
		return 0;

	p = current_proc(tgid);
	if (!p) {
		stat_inc(slot, PROFD_STAT_LOST_PROCS);
		return 0;
	}
	if (!(cfg->flags & PROFD_SESSION_ALL) && !((p->pid_mask | p->exe_mask) & (1u << slot)))
		return 0;

	s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);
	if (!s) {
		stat_inc(slot, PROFD_STAT_LOST_RINGBUF);
		return 0;
	}
	s->type = PROFD_EV_SAMPLE;
	s->session = slot;
	s->pid = tgid;
	s->tid = tid;
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	task = (struct task_struct *)bpf_get_current_task_btf();
	BPF_CORE_READ_INTO(&s->pcomm, task, group_leader, comm);

	if (!user_mode(ctx)) {
		n = bpf_get_stack(ctx, s->kstack, sizeof(s->kstack), 0);
		if (n < 0) {
			stat_inc(slot, PROFD_STAT_ERR_KSTACK);
			n = 0;
		}
	}
	s->kstack_sz = n;
	s->ustack_sz = 0;
	if (BPF_CORE_READ(task, flags) & PF_KTHREAD)
		__builtin_memset(s->sp_words, 0, sizeof(s->sp_words));
	else
		s->ustack_sz = walk_user(task, s, slot);
	stat_inc(slot, PROFD_STAT_SAMPLES);
	/* Samples are drained on a timer: a wakeup per sample costs more. */
	bpf_ringbuf_submit(s, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Children of targeted processes are targets too, from their first instruction. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(profd_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct profd_proc *pp, c = {};

	if (ptgid == ctgid)	/* a new thread, same process */
		return 0;
	pp = bpf_map_lookup_elem(&procs, &ptgid);
	if (!pp || !(pp->pid_mask | pp->exe_mask | all_sessions))
		return 0;
	c.pid_mask = pp->pid_mask;
	c.exe_mask = pp->exe_mask;	/* same executable until it execs */
	c.gen = pp->gen;
	bpf_map_update_elem(&procs, &ctgid, &c, BPF_ANY);
	proc_event(PROFD_PROC_FORK, ctgid, ptgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(profd_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = task->tgid;
	struct profd_proc *p, fresh = {};

	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p) {
		p->exe_mask = exe_mask_of(task);
		p->gen = filter_gen;
		p->need_maps = !!(p->pid_mask | p->exe_mask | all_sessions);
	} else {
		fresh.exe_mask = exe_mask_of(task);
		if (!fresh.exe_mask && !all_sessions)
			return 0;
		fresh.gen = filter_gen;
		fresh.need_maps = 1;
		bpf_map_update_elem(&procs, &tgid, &fresh, BPF_ANY);
		p = &fresh;
	}
	if (p->pid_mask | p->exe_mask | all_sessions)
		proc_event(PROFD_PROC_EXEC, tgid, 0);
	return 0;
}
#include "heap.bpf.h"
