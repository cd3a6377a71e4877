/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu_bpf: the CPU sampler's programs and maps, by name: the only file of
 * cpu/ that sees the skeleton (bpf/profd.skel.h), as libbpf-tools' x.c is
 * the only one that sees x.skel.h.  The object itself is tracer/bpfobj's.
 * On the loop's thread.
 */
#ifndef PROFD_CPU_BPF_H
#define PROFD_CPU_BPF_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_link;
struct bpfobj;
struct profd_session_cfg;

/* Session slot's row of the sessions map (bpf/abi/cpu.h): 0 or negative errno. */
int cpu_bpf__set_session(struct bpfobj *o, uint32_t slot, const struct profd_session_cfg *cfg);
/* Slot's PROFD_STAT_NR counters, summed over CPUs: 0 or negative errno. */
int cpu_bpf__stats(struct bpfobj *o, uint32_t slot, uint64_t *sum);
void cpu_bpf__zero_stats(struct bpfobj *o, uint32_t slot);
/* The sampling program on perf event fd, for slot (its bpf_cookie); NULL
 * and errno on failure.  The link owns fd. */
struct bpf_link *cpu_bpf__attach(struct bpfobj *o, int fd, uint32_t slot);

/* ---- off-CPU (bpf/offcpu.bpf.c) ---- */

struct kernel_features;
struct profd_bpf;
/* A bpfobj prepare function (ctx: a const bool, whether off-CPU profiles
 * may be taken): sched_switch's field offsets from tracefs; where it has
 * none that fit, or ctx says no, the program does not load (logged). */
void cpu_bpf__offcpu_prepare(struct profd_bpf *skel, const struct kernel_features *f, void *ctx);
/* Did the off-CPU program load? */
bool cpu_bpf__offcpu_loaded(struct bpfobj *o);
/* The off-CPU sessions' slot bits: all, whole-system, with executable
 * targets, and wall-clock (whose targets' preempted time counts too). */
void cpu_bpf__offcpu_set(struct bpfobj *o, uint32_t mask, uint32_t all, uint32_t exe,
			 uint32_t wall);
void cpu_bpf__offcpu_set_period(struct bpfobj *o, uint64_t ns);
/* Attach the sched_switch program (a new epoch: earlier switch-outs are
 * not timed); NULL and errno on failure. */
struct bpf_link *cpu_bpf__offcpu_attach(struct bpfobj *o);
/* PROFD_OSTAT_NR counters, summed over CPUs. */
int cpu_bpf__offcpu_stats(struct bpfobj *o, uint64_t *sum);
struct profd_offcpu_thread;
/* tid's state in the kernel (its slot in offcpu_threads), if it has one of
 * this epoch: 0, or -ENOENT. */
int cpu_bpf__offcpu_thread(struct bpfobj *o, uint32_t tid, struct profd_offcpu_thread *out);

#endif
