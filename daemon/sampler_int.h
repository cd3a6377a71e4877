/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sampler_int: what the heap tracker (heap.c) needs from the sampler, which
 * owns the one BPF object both use: its maps, the process table, the
 * symbolizer and the target filters.  Not for other modules.
 */
#ifndef PROFD_SAMPLER_INT_H
#define PROFD_SAMPLER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct heap;
struct procs;
struct profile_bpf;
struct sampler;
struct symbolizer;

/* enum bpf_attach_type's BPF_TRACE_UPROBE_SESSION (Linux 6.12); the
 * installed uapi headers are older. */
#define BPF_TRACE_UPROBE_SESSION_VALUE 57

struct profile_bpf *sampler__skel(struct sampler *sm);
struct procs *sampler__procs(struct sampler *sm);
struct symbolizer *sampler__symbolizer(struct sampler *sm);
bool sampler__heap_loaded(const struct sampler *sm);
/* Process events for heap targets go to h (NULL: none). */
void sampler__set_heap(struct sampler *sm, struct heap *h);

/* Target filters, by mask bit (a session's slot bit, or PROFD_HEAP_BIT). */
int sampler__exe_filter(struct sampler *sm, const char *exe, uint32_t bit, bool set, char *errbuf,
			size_t errlen);
int sampler__pid_filter(struct sampler *sm, int pid, uint32_t bit, bool set);
void sampler__pid_filter_clear_all(struct sampler *sm, uint32_t bit);
/* Exe filters changed: the kernel side recomputes its cached matches. */
void sampler__filters_changed(struct sampler *sm);
/* A whole-system consumer starts (+1) or ends (-1): every process is reported. */
void sampler__whole_system(struct sampler *sm, int delta);

#endif
