/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * env: every PROFD_* environment variable profd reads, read once, when a
 * command starts (env__read), and handed to the modules that use them
 * through their options: no module below cmd/ calls getenv() for a knob of
 * profd's.  They are for debugging, tests and benchmarks; docs/operations.md
 * lists them.  (systemd's NOTIFY_SOCKET and WATCHDOG_* are read by
 * cmd/sdnotify.c, JOURNAL_STREAM by lib/log.c, DEBUGINFOD_* by
 * symbolizer/debuginfod.c: those belong to other programs' protocols.)
 */
#ifndef PROFD_ENV_H
#define PROFD_ENV_H

#include <stdbool.h>

struct env {
	/* PROFD_DEBUG (set, any value): libbpf's own messages on stderr; in
	 * profd record also the debug log lines. */
	bool debug;
	/* PROFD_DEBUG_UNWIND: set, log why stacks end early; 2 or more, also
	 * every unwinding step. */
	bool debug_unwind;
	bool trace_unwind;
	/* PROFD_FAULT_BUILD_DELAY_MS: each profile build first sleeps this long
	 * (tests of the loop's answers while a build runs). */
	long fault_build_delay_ms;
	/* PROFD_BENCH_CUT: samples stop after this piece of cpu.bpf.c
	 * (bench/kernel_pieces.sh); PROFD_STACK_MAX: bytes of user stack a
	 * sample copies at most (docs/benchmarks.md).  Each only when set. */
	bool bench_cut_set;
	int bench_cut;
	bool stack_max_set;
	int stack_max;
	/* PROFD_RING_KB: the sample ring's size in KiB (a power of two, at
	 * least 64), instead of one sized by the CPUs: its cost per sample and
	 * its share of RSS (docs/benchmarks.md). */
	int ring_kb;
	/* PROFD_HEAP_PROBES=uprobe: a uprobe and a uretprobe per allocator even
	 * where the kernel has uprobe sessions. */
	bool heap_probes_uprobe;
	/* PROFD_EXIT_HOOK=auto|exit_group|off: the config's exit_hook, for
	 * tests and benchmarks (bench/syscall_cost.sh measures exit_group's
	 * cost to every syscall on the kernel it runs on); -1: not set. */
	int exit_hook;
	/* PROFD_HEAP_MAX_SITES: entries of the BPF heap site map (default
	 * 16384), for tests that fill it. */
	unsigned heap_max_sites;
	/* PROFD_HEAP_MAX_LIVE: entries of the BPF map of live sampled
	 * allocations (default 65536), for tests that fill it. */
	unsigned heap_max_live;
};

void env__read(struct env *e);

#endif
