// SPDX-License-Identifier: BSD-2-Clause
/*
 * /proc/PID/maps text (proc_maps__parse): any local user shapes it, by the
 * paths they map and how many mappings they make.  Then lookups at every
 * mapping's edges, as the sampler does for each frame.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/procs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_maps *pm;
	const struct proc_map *m;

	/* Small limits, so truncation is reached too. */
	if (proc_maps__parse((const char *)data, size, 64, &pm))
		return 0;
	for (size_t i = 0; i < pm->n; i++) {
		/* Sorted by start, each a non-empty range with a path. */
		if (pm->m[i].end <= pm->m[i].start || !pm->m[i].path ||
		    (i && pm->m[i - 1].start > pm->m[i].start))
			abort();
		m = proc_maps__find(pm, pm->m[i].start);
		if (!m || pm->m[i].start < m->start || pm->m[i].start >= m->end)
			abort();
		m = proc_maps__find(pm, pm->m[i].end - 1);
		if (m && (pm->m[i].end - 1 < m->start || pm->m[i].end - 1 >= m->end))
			abort();
		proc_maps__find(pm, pm->m[i].start - 1);
		proc_maps__find(pm, pm->m[i].end);
	}
	proc_maps__put(proc_maps__get(pm));
	proc_maps__put(pm);
	return 0;
}
