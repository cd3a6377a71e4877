/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpurings: the daemon's side of cpu_rings (bpf/abi/cpu.h), the CPU
 * sampler's small samples in a ring per CPU, written by the program and
 * read here through a mapping of the array.  The kernel side owns each
 * ring's head, this side its tail.  A record that cannot be one the
 * program wrote (a length out of range) ends that ring's read: what
 * waits there is dropped and counted, never read past.
 */
#ifndef PROFD_CPURINGS_H
#define PROFD_CPURINGS_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/abi/cpu.h"

struct cpurings;

/* A record's payload (a profd_sample and what follows); as libbpf's ring
 * callbacks: non-zero stops the read after this record, and is returned. */
typedef int (*cpurings_fn)(void *ctx, void *data, size_t size);

/* Map map_fd, an array of nrings struct profd_cpuring.  NULL, errno set, if
 * it cannot be (logged). */
struct cpurings *cpurings__map(int map_fd, uint32_t nrings);
/* The same over memory the caller owns (the unit tests). */
struct cpurings *cpurings__over(struct profd_cpuring *rings, uint32_t nrings);
void cpurings__free(struct cpurings *cr);

/* Read every ring, a record at a time, into fn; each ring's tail advances
 * past what was read.  Returns fn's non-zero value if it stopped the read
 * (the next read goes on from the next ring), else 0. */
int cpurings__consume(struct cpurings *cr, cpurings_fn fn, void *ctx);

/* Records dropped because their length could not be right. */
uint64_t cpurings__bad(const struct cpurings *cr);

#endif
