// SPDX-License-Identifier: BSD-2-Clause
/* env: the PROFD_* environment variables, read in one place (env.h). */
#include <stdlib.h>
#include <string.h>

#include "cmd/env.h"
#include "tracer/bpfobj.h"

void env__read(struct env *e)
{
	const char *v;

	*e = (struct env){};
	e->debug = getenv("PROFD_DEBUG") != NULL;
	v = getenv("PROFD_DEBUG_UNWIND");
	e->debug_unwind = v != NULL;
	e->trace_unwind = v && atoi(v) >= 2;
	v = getenv("PROFD_FAULT_BUILD_DELAY_MS");
	if (v)
		e->fault_build_delay_ms = strtol(v, NULL, 10);
	v = getenv("PROFD_BENCH_CUT");
	e->bench_cut_set = v != NULL;
	e->bench_cut = v ? atoi(v) : 0;
	v = getenv("PROFD_STACK_MAX");
	e->stack_max_set = v != NULL;
	e->stack_max = v ? atoi(v) : 0;
	v = getenv("PROFD_RING_KB");
	e->ring_kb = v ? atoi(v) : 0;
	v = getenv("PROFD_HEAP_PROBES");
	e->heap_probes_uprobe = v && !strcmp(v, "uprobe");
	v = getenv("PROFD_EXIT_HOOK");
	e->exit_hook = v ? bpfobj__parse_exit_hook(v) : -1;
	if (e->exit_hook < 0)
		e->exit_hook = -1;
	v = getenv("PROFD_HEAP_MAX_SITES");
	if (v && atoi(v) > 0)
		e->heap_max_sites = atoi(v);
	v = getenv("PROFD_HEAP_MAX_LIVE");
	if (v && atoi(v) > 0)
		e->heap_max_live = atoi(v);
}
