// SPDX-License-Identifier: BSD-2-Clause
/* env: every PROFD_* knob read in one place, as docs/operations.md lists them. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "cmd/env.h"

static const char *const knobs[] = {
	"PROFD_DEBUG",	    "PROFD_DEBUG_UNWIND", "PROFD_FAULT_BUILD_DELAY_MS",
	"PROFD_BENCH_CUT",  "PROFD_STACK_MAX",	  "PROFD_HEAP_PROBES",
};

static void clear(void)
{
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		unsetenv(knobs[i]);
}

TestSuite(env, .init = clear, .fini = clear);

Test(env, nothing_set_is_production)
{
	struct env e;

	env__read(&e);
	cr_expect_not(e.debug);
	cr_expect_not(e.debug_unwind);
	cr_expect_not(e.trace_unwind);
	cr_expect_eq(e.fault_build_delay_ms, 0);
	cr_expect_not(e.bench_cut_set);
	cr_expect_not(e.stack_max_set);
	cr_expect_not(e.heap_probes_uprobe);
}

Test(env, each_knob_as_documented)
{
	struct env e;

	setenv("PROFD_DEBUG", "", 1);		/* set is enough */
	setenv("PROFD_DEBUG_UNWIND", "2", 1);
	setenv("PROFD_FAULT_BUILD_DELAY_MS", "4000", 1);
	setenv("PROFD_BENCH_CUT", "3", 1);
	setenv("PROFD_STACK_MAX", "0", 1);	/* 0 is a value, not unset */
	setenv("PROFD_HEAP_PROBES", "uprobe", 1);
	env__read(&e);
	cr_expect(e.debug);
	cr_expect(e.debug_unwind);
	cr_expect(e.trace_unwind);
	cr_expect_eq(e.fault_build_delay_ms, 4000);
	cr_expect(e.bench_cut_set);
	cr_expect_eq(e.bench_cut, 3);
	cr_expect(e.stack_max_set);
	cr_expect_eq(e.stack_max, 0);
	cr_expect(e.heap_probes_uprobe);
}

Test(env, unwind_tracing_only_from_2)
{
	struct env e;

	setenv("PROFD_DEBUG_UNWIND", "1", 1);
	env__read(&e);
	cr_expect(e.debug_unwind);
	cr_expect_not(e.trace_unwind);
}

Test(env, heap_probes_only_uprobe_means_uprobe)
{
	struct env e;

	setenv("PROFD_HEAP_PROBES", "session", 1);
	env__read(&e);
	cr_expect_not(e.heap_probes_uprobe);
}
