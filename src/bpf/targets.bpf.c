// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Process lifecycle: which processes are targets, followed across fork,
 * exec and exit with classic tracepoints.  Their records' layouts differ
 * between kernels (6.12 has char[16] comms where 6.18 has __data_loc), so
 * the few fields read come at offsets the daemon takes from tracefs.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#define PROFD_TARGETS_OWNER
#include "bpf/targets.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define CLONE_THREAD 0x00010000

volatile __u32 filter_gen = 1;
volatile __u32 inherit_mask;
volatile __u32 report_all;
volatile __u32 exe_filters;
volatile __u32 lazy_events;
volatile __u32 lazy_procs;
volatile __u32 state_at_free;
volatile __u32 exit_early;	/* cpu.bpf.c's profd_exit_early is attached */
volatile __u32 tgid_bits_on;
const volatile __u32 tid_words = PROFD_TID_WORDS;
const volatile struct profd_tp_offsets tp_off;

/*
 * A new process: it starts as its parent's copy, so it inherits the
 * parent's targets and executable, from its first instruction.  Runs in
 * the parent, before the child can run.  Every entry is written whole,
 * also when the parent has none: the child's pid may be a reused one.
 */
SEC("tracepoint/task/task_newtask")
int profd_newtask(void *ctx)
{
	__u32 ptgid = bpf_get_current_pid_tgid() >> 32;
	__u32 child = (__u32)tp_field(ctx, tp_off.newtask_pid, 4);
	__u64 flags = tp_field(ctx, tp_off.newtask_flags, 8);
	struct profd_exe_state *pe;
	struct profd_title_area *ta, child_ta;
	struct profd_proc_state st = {};
	__u32 *pm, *copy, mask = 0;
	bool interesting;

	if ((flags & CLONE_THREAD) || !child)
		return 0;
	pm = tgid_maybe(PROFD_TGID_TARGET, ptgid) ? bpf_map_lookup_elem(&pid_targets, &ptgid) : NULL;
	if (pm)
		mask = *pm & inherit_mask;
	if (mask) {
		tgid_bit_set(PROFD_TGID_TARGET, child, true);
		bpf_map_update_elem(&pid_targets, &child, &mask, BPF_ANY);
	} else {
		/* An entry the bits no longer cover (see tgid_bits) goes too. */
		bpf_map_delete_elem(&pid_targets, &child);
	}
	pe = bpf_map_lookup_elem(&exe_targets, &ptgid);
	if (pe)
		bpf_map_update_elem(&exe_targets, &child, pe, BPF_ANY);
	else
		bpf_map_delete_elem(&exe_targets, &child);
	copy = tgid_maybe(PROFD_TGID_COPY, ptgid) ? bpf_map_lookup_elem(&proc_copy, &ptgid) : NULL;
	if (copy) {
		tgid_bit_set(PROFD_TGID_COPY, child, true);
		bpf_map_update_elem(&proc_copy, &child, copy, BPF_ANY);
	} else {
		bpf_map_delete_elem(&proc_copy, &child);
	}
	ta = bpf_map_lookup_elem(&title_area, &ptgid);
	if (ta) {
		child_ta.addr = ta->addr;
		child_ta.flags = PROFD_TA_FORKED;
		child_ta.pg_major = ta->pg_major;
		child_ta.wait_addr = ta->wait_addr;
		bpf_map_update_elem(&title_area, &child, &child_ta, BPF_ANY);
	} else
		bpf_map_delete_elem(&title_area, &child);
	interesting = mask || (pe && pe->mask) || report_all;
	if (!interesting) {
		bpf_map_delete_elem(&proc_state, &child);
		return 0;
	}
	st.asked_gen = filter_gen;
	if (lazy_procs) {
		/* Told at its first sample, if it has one (FIRST). */
		st.flags = PROFD_PS_NEED_FIRST;
		st.ppid = ptgid;
		bpf_map_update_elem(&proc_state, &child, &st, BPF_ANY);
		return 0;
	}
	st.flags = PROFD_PS_KNOWN;
	bpf_map_update_elem(&proc_state, &child, &st, BPF_ANY);
	proc_event(PROFD_PROC_FORK, child, ptgid, 0);
	return 0;
}

/*
 * A new program: its executable must be resolved again (the daemon reads
 * /proc/PID/exe), and its mappings read again once ld.so has mapped the
 * libraries (proc_run, see cpu.bpf.c).  pid targets stay targets.
 */
SEC("tracepoint/sched/sched_process_exec")
int profd_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct profd_proc_state st = {.flags = PROFD_PS_NEED_RUN}, *old;
	__u32 *pm = tgid_maybe(PROFD_TGID_TARGET, tgid) ? bpf_map_lookup_elem(&pid_targets, &tgid) :
							       NULL;

	old = bpf_map_lookup_elem(&proc_state, &tgid);
	st.exec_seq = old ? old->exec_seq + 1 : 1;
	bpf_map_delete_elem(&exe_targets, &tgid);
	bpf_map_delete_elem(&proc_run, &tgid);
	bpf_map_delete_elem(&proc_copy, &tgid);
	bpf_map_delete_elem(&title_area, &tgid);	/* a new program: new arguments */
	if (!(pm && *pm) && !report_all && !exe_filters) {
		bpf_map_delete_elem(&proc_state, &tgid);
		return 0;
	}
	st.asked_gen = filter_gen;
	st.flags |= old ? old->flags & PROFD_PS_KNOWN : 0;
	/* Lazily: told at its first sample, but a postmaster at once, so that
	 * the children it forks inherit where its title lives. */
	if (lazy_procs && !title_comm()) {
		st.flags |= PROFD_PS_NEED_FIRST;
		bpf_map_update_elem(&proc_state, &tgid, &st, BPF_ANY);
		return 0;
	}
	st.flags |= PROFD_PS_KNOWN;
	bpf_map_update_elem(&proc_state, &tgid, &st, BPF_ANY);
	proc_event(PROFD_PROC_EXEC, tgid, 0, st.exec_seq);
	return 0;
}

/* The whole process is gone: forget it, so its pid starts clean if reused. */
SEC("tracepoint/sched/sched_process_exit")
int profd_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct profd_proc_state *st;
	bool known;
	__u32 seq;

	/* group_dead (6.16+) says the last thread is leaving; before, the
	 * leader's exit stands for the process. */
	if (tp_off.exit_group_dead) {
		if (!(tp_field(ctx, tp_off.exit_group_dead, 4) & 0xff))
			return 0;
	} else if (tid != tgid) {
		return 0;
	}
	st = bpf_map_lookup_elem(&proc_state, &tgid);
	seq = st ? st->exec_seq : 0;
	/* A process the daemon was never told of has nothing to forget. */
	known = st && (st->flags & PROFD_PS_KNOWN);
	if (tgid_maybe(PROFD_TGID_TARGET, tgid)) {
		bpf_map_delete_elem(&pid_targets, &tgid);
		tgid_bit_set(PROFD_TGID_TARGET, tgid, false);
	}
	bpf_map_delete_elem(&exe_targets, &tgid);
	if (st && state_at_free)
		st->flags |= PROFD_PS_EXITED;	/* deleted when freed */
	else
		bpf_map_delete_elem(&proc_state, &tgid);
	bpf_map_delete_elem(&proc_run, &tgid);
	/* profd_exit_early, at this tracepoint too, may run after us and
	 * reads these: then they go when the leader is freed. */
	if (!exit_early) {
		bpf_map_delete_elem(&proc_copy, &tgid);
		tgid_bit_set(PROFD_TGID_COPY, tgid, false);
		bpf_map_delete_elem(&title_area, &tgid);
	}
	if (known)
		proc_event(PROFD_PROC_EXIT, tgid, 0, seq);
	return 0;
}

/*
 * A task is freed: its exit snapshot goes, before its tid can be reused.
 * Not at sched_process_exit, which since 6.16 comes before exit_mm(), when
 * the snapshot is needed most.  Runs from RCU, not as the task: the tid is
 * the record's.
 */
SEC("tracepoint/sched/sched_process_free")
int profd_task_free(void *ctx)
{
	__u32 tid = (__u32)tp_field(ctx, tp_off.free_pid, 4);
	struct profd_exit_stack *big;
	struct profd_exit_snap *snap;
	struct profd_proc_state *st;

	snap = exit_snap_of(tid);
	if (snap) {
		big = exit_stack_slot(tid);
		if (big && big->tid == tid)
			big->tid = 0;
		snap->tid = 0;
	}
	/* A tid that is a key of proc_state is an exited process's leader
	 * (no live task can have its number): the process is gone now. */
	st = bpf_map_lookup_elem(&proc_state, &tid);
	if (st && (st->flags & PROFD_PS_EXITED))
		bpf_map_delete_elem(&proc_state, &tid);
	/* Left by profd_exit for profd_exit_early; no other live process
	 * can have this number as its pid yet. */
	if (exit_early) {
		bpf_map_delete_elem(&proc_copy, &tid);
		tgid_bit_set(PROFD_TGID_COPY, tid, false);
		bpf_map_delete_elem(&title_area, &tid);
	}
	return 0;
}
