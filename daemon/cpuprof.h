/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpuprof: turns a session's aggregated raw stacks into a symbolized pprof
 * CPU profile (sample types samples/count and cpu/nanoseconds).
 */
#ifndef PROFD_CPUPROF_H
#define PROFD_CPUPROF_H

#include <stddef.h>
#include <stdint.h>

struct pprof;
struct procs;
struct symbolizer;

/* One distinct stack of one thread, and how many samples hit it. */
struct raw_stack {
	uint32_t pid;
	uint32_t tid;
	const char *comm;	/* thread name */
	const char *pcomm;	/* process name */
	const uint64_t *kframes;	/* innermost first */
	const uint64_t *uframes;	/* innermost first */
	uint16_t nk;
	uint16_t nu;
	uint64_t count;
};

typedef int (*raw_stack_fn)(const struct raw_stack *st, void *ctx);
/* Calls fn for every stack, stopping at the first non-zero return. */
typedef int (*raw_stack_iter)(void *src, raw_stack_fn fn, void *ctx);

struct cpuprof_meta {
	int frequency;
	int64_t start_ns;
	int64_t duration_ns;
	uint64_t lost_ringbuf;
	uint64_t lost_procs;
	uint64_t err_ustack;
	uint64_t err_kstack;
	const char *targets;	/* human-readable, for a comment */
};

/* Symbolization outcome, for logs and tests. */
struct cpuprof_result {
	uint64_t samples;
	uint64_t user_frames;
	uint64_t user_frames_symbolized;
	uint64_t truncated;	/* samples whose user stack was cut at a broken frame chain */
};

int cpuprof__build(struct symbolizer *sym, struct procs *procs, const struct cpuprof_meta *meta,
		   raw_stack_iter iter, void *src, struct pprof **out, struct cpuprof_result *res);

#endif
