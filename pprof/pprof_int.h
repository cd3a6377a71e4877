/* SPDX-License-Identifier: BSD-2-Clause */
/* pprof_int: helpers shared by the pprof module's files (pprof.c,
 * flamegraph.c).  Not for other modules. */
#ifndef PROFD_PPROF_INT_H
#define PROFD_PPROF_INT_H

#include <stddef.h>

/*
 * Makes *(T **)arrp hold at least need elements of elem bytes, doubling.
 * The pointer goes through memcpy so one helper serves every element type.
 * 0 or -ENOMEM (the array is left as it was).
 */
int pprof__grow(void *arrp, size_t *cap, size_t need, size_t elem);

#endif
