/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bpfobj: the one owner of profd's BPF object (the .bpf.c files of bpf/, linked into one
 * skeleton).  It loads it on whatever kernel this is (with or without BTF,
 * with or without a JIT), attaches the process-lifecycle tracepoints,
 * keeps the process table (procs) in step with what the kernel reports,
 * owns the target-filter maps, and hands ring-buffer records to the
 * consumers registered with it: CPU sessions (sampler.c) and heap
 * tracking (heap.c), which are peers and know nothing of each other.
 *
 * Everything runs on the libevent loop's thread.
 */
#ifndef PROFD_BPFOBJ_H
#define PROFD_BPFOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpfobj;
struct kernel_features;
struct event_base;
struct procs;
struct titles;
struct profd_bpf;
struct profd_offcpu_end;
struct profd_proc_event;
struct profd_sample;

/*
 * A consumer's part of loading, between open and load (as libbpf-tools'
 * main() goes: open, configure, load, attach): it chooses which of its
 * programs load and sizes its maps, seeing what the kernel offers.
 */
typedef void (*bpfobj_prepare_fn)(struct profd_bpf *skel, const struct kernel_features *f,
				  void *ctx);
#define BPFOBJ_MAX_PREPARE 4

struct bpfobj_opts {
	/* Called in order once the object is open, before it loads. */
	struct {
		bpfobj_prepare_fn fn;
		void *ctx;
	} prepare[BPFOBJ_MAX_PREPARE];
	/* Debugging and benchmark knobs, from the environment (cmd/env.h). */
	bool libbpf_debug;		/* libbpf's messages on stderr too */
	bool heap_probes_uprobe;	/* no uprobe sessions even where the kernel has them */
	int exit_hook;			/* enum bpfobj_exit_hook */
	bool bench_cut_set, stack_max_set;
	int bench_cut, stack_max;	/* cpu.bpf.c's bench_cut and stack_max, when set */
	int ring_kb;			/* the sample ring's KiB; 0: by the CPUs */
	/* arm64: a user address's bits below a return address's PAC
	 * (symbolizer__user_addr_mask); 0: 48 bits. */
	uint64_t user_addr_mask;
};

/*
 * Where the kernel side keeps a process's user state and title as it exits
 * (architecture.md, "Exiting processes").  AUTO: at sched_process_exit
 * where it comes before exit_mm() (6.16+), else not at all; SYSCALL: at
 * the exit_group syscall, which every syscall on the machine pays for while
 * attached; OFF: not at all.
 */
enum bpfobj_exit_hook {
	BPFOBJ_EXIT_AUTO,
	BPFOBJ_EXIT_SYSCALL,
	BPFOBJ_EXIT_OFF,
};

/* "auto", "exit_group", "off": its enum value, or -EINVAL. */
int bpfobj__parse_exit_hook(const char *s);

/* Called on the loop's thread for every record of its kind. */
struct bpfobj_consumer {
	/* A process event, after the process table has been updated. */
	void (*on_proc)(void *ctx, const struct profd_proc_event *e);
	/* A CPU sample of size bytes (header, frames, stack copy). */
	void (*on_sample)(void *ctx, const struct profd_sample *s, size_t size);
	/* A kept off-CPU switch's time (bpf/abi/offcpu.h), after its sample. */
	void (*on_offcpu)(void *ctx, const struct profd_offcpu_end *e);
	void *ctx;
};

#define BPFOBJ_MAX_CONSUMERS 4

/*
 * Load and attach.  On failure returns negative errno and has logged one
 * line naming what is missing: a capability, a kernel feature and the
 * version that has it, or the verifier's refusal.
 */
int bpfobj__open(struct event_base *base, const struct bpfobj_opts *opts, struct bpfobj **out);
void bpfobj__free(struct bpfobj *o);

struct profd_bpf *bpfobj__skel(struct bpfobj *o);
struct procs *bpfobj__procs(struct bpfobj *o);
/* Title labels of the processes sampled (proc/titles.h). */
struct titles *bpfobj__titles(struct bpfobj *o);
/*
 * The loop thread's CPU time by stage, for /metrics.  bpfobj charges ring
 * reads, process events and title reads; its consumers (the sampler) enter
 * their own stages inside a drain.
 */
enum bpfobj_stage {
	BPFOBJ_STAGE_DRAIN,		/* reading the rings, less the stages below */
	BPFOBJ_STAGE_PROC_EVENTS,	/* the process-event ring: fork, exec, exit, exit titles */
	BPFOBJ_STAGE_UNWIND,		/* user stacks unwound from their copies */
	BPFOBJ_STAGE_TITLES,		/* process titles read from /proc */
	BPFOBJ_STAGES
};
struct stagecpu *bpfobj__stagecpu(struct bpfobj *o);
const struct kernel_features *bpfobj__features(const struct bpfobj *o);
int bpfobj__ncpus(const struct bpfobj *o);
const int *bpfobj__cpus(const struct bpfobj *o);

int bpfobj__add_consumer(struct bpfobj *o, const struct bpfobj_consumer *c);
/* Remove the consumer registered with ctx. */
void bpfobj__remove_consumer(struct bpfobj *o, void *ctx);

/* Read both rings now, process events first: for up to 200 ms, the rest
 * on the loop's next pass. */
void bpfobj__drain(struct bpfobj *o);
/* Reads of the rings cut short so that the event loop could run. */
uint64_t bpfobj__drain_cuts(const struct bpfobj *o);
/* Per-CPU sample ring records dropped for a length out of range (cpurings.h). */
uint64_t bpfobj__ring_bad_records(const struct bpfobj *o);
/* Process events handled, and the loop's CPU time they took, by kind. */
enum bpfobj_event {
	BPFOBJ_EV_TITLE,	/* a title read at exit_group */
	BPFOBJ_EV_NEW,		/* the rest: enum profd_proc_reason's, in its order */
	BPFOBJ_EV_FORK,
	BPFOBJ_EV_EXEC,
	BPFOBJ_EV_RUN,
	BPFOBJ_EV_EXIT,
	BPFOBJ_EV_FIRST,
	BPFOBJ_EVENT_KINDS
};
struct bpfobj_event_stats {
	uint64_t count[BPFOBJ_EVENT_KINDS];
	uint64_t cpu_ns[BPFOBJ_EVENT_KINDS];
};
void bpfobj__event_stats(const struct bpfobj *o, struct bpfobj_event_stats *st);

/* pid's samples needed bytes of user stack (below_fp: no further than the
 * innermost frame pointer): copy that much for its executable from now on
 * (tracer/stackcopy.h). */
void bpfobj__stack_need(struct bpfobj *o, int pid, uint64_t bytes, bool below_fp);
/* A sample of pid unwound complete reading bytes of its copy (stackcopy__used). */
void bpfobj__stack_used(struct bpfobj *o, int pid, uint64_t bytes);
struct stackcopy_stats;
void bpfobj__stack_stats(const struct bpfobj *o, struct stackcopy_stats *st);

/* ---- target filters, for targets.c ---- */

/* pid is a target of the consumer with mask bit `bit`, and so are the
 * children it forks from now on. */
int bpfobj__pid_set(struct bpfobj *o, int pid, uint32_t bit);
/* No process is a pid target of bit any more, children included. */
void bpfobj__pid_clear_all(struct bpfobj *o, uint32_t bit);
/* Does a process running exe belong to the consumer that registered it? */
struct proc_exe;
typedef bool (*bpfobj_exe_match_fn)(const void *ctx, const struct proc_exe *exe);
/* Select processes whose executable match() accepts, for bit; ctx must
 * outlive the registration.  Processes are resolved lazily, as the kernel
 * side asks. */
int bpfobj__exe_register(struct bpfobj *o, uint32_t bit, bpfobj_exe_match_fn match,
			 const void *ctx);
void bpfobj__exe_unregister(struct bpfobj *o, uint32_t bit);
/* A consumer of every process starts (+1) or ends (-1). */
void bpfobj__whole_system(struct bpfobj *o, int delta);
/* Is the process's executable one of bit's targets?  (For samples the
 * kernel side could not decide: PROFD_SF_TENTATIVE.) */
bool bpfobj__exe_matches(struct bpfobj *o, uint32_t bit, int pid);
/* The target bits the kernel side holds for pid (pid_targets), 0 if none. */
uint32_t bpfobj__pid_mask(struct bpfobj *o, int pid);

/*
 * Call fn for every entry of hash map map_fd, read in batches: a key-by-key
 * walk (get_next_key) restarts from the first key whenever the BPF side
 * deletes the one it stands on, and sees entries twice.  Stops at fn's
 * first non-zero return and returns it; negative errno on a failed read.
 */
typedef int (*bpfobj_entry_fn)(const void *key, const void *value, void *ctx);
int bpfobj__map_each(int map_fd, size_t key_size, size_t value_size, bpfobj_entry_fn fn,
		     void *ctx);

/* sums[i] = the sum over CPUs of per-CPU array map_fd's key first + i. */
int bpfobj__percpu_sum(int map_fd, uint32_t first, size_t n, uint64_t *sums);
/* Zero keys [first, first + n) of a per-CPU array. */
void bpfobj__percpu_zero(int map_fd, uint32_t first, size_t n);

#endif
