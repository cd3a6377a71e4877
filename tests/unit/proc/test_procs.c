// SPDX-License-Identifier: BSD-2-Clause
/* procs: /proc/PID/maps parsing, hostile input, and the bounded process table. */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/procs.h"

static const char maps[] =
	"55d0c4a00000-55d0c4a28000 r--p 00000000 fe:01 1234 /usr/bin/postgres\n"
	"55d0c4a28000-55d0c4e00000 r-xp 00028000 fe:01 1234 /usr/bin/postgres\n"
	"7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
	"7f1000000000-7f1000100000 r-xp 00026000 08:02 99 /lib/x86_64-linux-gnu/libc.so.6\n"
	"7f2000000000-7f2000001000 r-xp 00000000 00:00 0 [vdso]\n"
	"7f3000000000-7f3000001000 rwxp 00000000 00:00 0 \n"
	"7f0800000000-7f0800010000 r-xp 00000000 08:02 77 /tmp/with space (deleted)\n";

Test(procs, parse_keeps_executable_file_mappings_sorted)
{
	struct proc_maps *pm;

	cr_assert_eq(proc_maps__parse(maps, strlen(maps), 100, &pm), 0);
	cr_assert_eq(pm->n, 4, "text of postgres, libc, the deleted file and the vDSO; got %zu",
		     pm->n);
	cr_assert_str_eq(pm->m[0].path, "/usr/bin/postgres");
	cr_assert_eq(pm->m[0].offset, 0x28000);
	cr_assert_eq(pm->m[0].dev, makedev(0xfe, 1));
	cr_assert_eq(pm->m[0].ino, 1234);
	cr_assert_str_eq(pm->m[1].path, "/tmp/with space (deleted)");
	cr_assert_str_eq(pm->m[2].path, "/lib/x86_64-linux-gnu/libc.so.6");
	cr_assert_str_eq(pm->m[3].path, PROC_MAP_VDSO);
	cr_assert_eq(pm->m[3].dev, 0);
	cr_assert_eq(pm->m[3].ino, 0);
	cr_assert_eq(proc_maps__find(pm, 0x55d0c4a28000)->ino, 1234);
	cr_assert_null(proc_maps__find(pm, 0x55d0c4a27fff), "r--p text is not executable");
	/* The vDSO is kept (symbolized from our own image); anonymous
	 * executable memory, and "[anon:...]" names a process may choose,
	 * are not. */
	cr_assert_not_null(proc_maps__find(pm, 0x7f2000000000));
	cr_assert_null(proc_maps__find(pm, 0x7f3000000000));
	proc_maps__put(pm);
	{
		static const char fake[] =
			"7f2000000000-7f2000001000 r-xp 00000000 00:00 0 [vdso] \n"
			"7f4000000000-7f4000001000 r-xp 00000000 00:00 0 [anon:[vdso]]\n"
			"7f5000000000-7f5000001000 r-xp 00000000 00:00 0 [vdsox]\n";

		cr_assert_eq(proc_maps__parse(fake, strlen(fake), 100, &pm), 0);
		cr_assert_eq(pm->n, 0, "only the exact \"[vdso]\" is the vDSO");
	}
	proc_maps__put(pm);
}

Test(procs, parse_is_bounded_and_survives_garbage)
{
	static const char garbage[] =
		"zzzz\n-\n\n7f-7e r-xp 0 0:0 1 /backwards\n"
		"1000-2000 r-xp 00000000 08:02 1 /ok\n"
		"1000-2000 r-xp 00000000 08:02 1\n"
		"3000-4000 r-xp 00000000 08:02 1 relative\n";
	char *big = malloc(1 << 20), *p = big;
	struct proc_maps *pm;

	cr_assert_eq(proc_maps__parse(garbage, strlen(garbage), 100, &pm), 0);
	cr_assert_eq(pm->n, 1);
	cr_assert_str_eq(pm->m[0].path, "/ok");
	proc_maps__put(pm);
	/* A process with thousands of executable mappings: cut at the limit. */
	for (int i = 0; i < 5000; i++)
		p += sprintf(p, "%x000-%x000 r-xp 00000000 08:02 %d /lib/l%d.so\n", i + 1, i + 2, i, i);
	cr_assert_eq(proc_maps__parse(big, p - big, 1000, &pm), 0);
	cr_assert_eq(pm->n, 1000);
	cr_assert(pm->truncated);
	proc_maps__put(pm);
	free(big);
}

/* A re-read of the same generation after libc's text was unmapped, the
 * vDSO's left alone, and a dlopen'd library replaced by another file at
 * its address. */
Test(procs, a_reread_keeps_what_was_unmapped_and_marks_what_was_replaced)
{
	static const char before[] =
		"55d0c4a28000-55d0c4e00000 r-xp 00028000 fe:01 1234 /usr/bin/postgres\n"
		"7f1000000000-7f1000100000 r-xp 00026000 08:02 99 /lib/x86_64-linux-gnu/libc.so.6\n"
		"7f1800000000-7f1800010000 r-xp 00001000 08:02 50 /usr/lib/plugin.so\n"
		"7f2000000000-7f2000001000 r-xp 00000000 00:00 0 [vdso]\n";
	static const char after[] =
		"55d0c4a28000-55d0c4e00000 r-xp 00028000 fe:01 1234 /usr/bin/postgres\n"
		"7f1800000000-7f1800010000 r-xp 00000000 08:02 51 /tmp/other.so\n"
		"7f2000000000-7f2000001000 r-xp 00000000 00:00 0 [vdso]\n"
		"7f3000000000-7f3000010000 r-xp 00000000 08:02 52 /usr/lib/new.so\n";
	struct proc_maps *old, *pm;
	const struct proc_map *m;

	cr_assert_eq(proc_maps__parse(before, strlen(before), 100, &old), 0);
	cr_assert_eq(proc_maps__parse(after, strlen(after), 100, &pm), 0);
	cr_assert_eq(proc_maps__merge(old, pm, 100), 0);
	cr_assert_eq(pm->n, 5, "4 read now and libc's text kept; got %zu", pm->n);
	for (size_t i = 1; i < pm->n; i++)
		cr_assert_lt(pm->m[i - 1].start, pm->m[i].start, "sorted");
	m = proc_maps__find(pm, 0x7f1000000100);
	cr_assert(m && !m->replaced && m->ino == 99, "unmapped text still names its samples");
	m = proc_maps__find(pm, 0x7f1800000100);
	cr_assert(m && m->replaced && m->ino == 51, "another file over the plugin: replaced");
	cr_assert(!proc_maps__find(pm, 0x55d0c4a28100)->replaced, "the same text is not replaced");
	cr_assert(!proc_maps__find(pm, 0x7f2000000100)->replaced, "nor the vDSO");
	cr_assert(!proc_maps__find(pm, 0x7f3000000100)->replaced, "nor what is new");

	/* Once replaced, always: the next re-read of the same text keeps it so. */
	struct proc_maps *again;

	cr_assert_eq(proc_maps__parse(after, strlen(after), 100, &again), 0);
	cr_assert_eq(proc_maps__merge(pm, again, 100), 0);
	cr_assert(proc_maps__find(again, 0x7f1800000100)->replaced);
	cr_assert_eq(again->n, 5);
	proc_maps__put(again);
	proc_maps__put(pm);

	/* Bounded: nothing kept past max_entries. */
	cr_assert_eq(proc_maps__parse(after, strlen(after), 100, &pm), 0);
	cr_assert_eq(proc_maps__merge(old, pm, 4), 0);
	cr_assert_eq(pm->n, 4);
	proc_maps__put(pm);
	proc_maps__put(old);
}

Test(procs, table_reads_live_processes_and_evicts_exited_first)
{
	struct procs *ps = procs__new(3);
	struct procs_stats st;
	struct proc_exe exe;
	pid_t kids[3];

	cr_assert_not_null(ps);
	cr_assert_eq(procs__snapshot(ps, getpid(), 0, NULL, PROCS_SEQ_LATEST), 0);
	cr_assert_not_null(procs__maps(ps, getpid(), PROCS_SEQ_LATEST));
	cr_assert_eq(procs__exe(ps, getpid(), &exe), 0);
	cr_assert_str_eq(exe.name, "unit_proc", "the test binary is build/tests/unit_proc");
	for (int i = 0; i < 3; i++) {
		kids[i] = fork();
		if (!kids[i]) {
			pause();
			_exit(0);
		}
		cr_assert_eq(procs__snapshot(ps, kids[i], getpid(), NULL, PROCS_SEQ_LATEST), 0);
	}
	procs__stats(ps, &st);
	cr_assert_eq(st.processes, 3, "bounded at 3");
	cr_assert_eq(st.evictions, 1);
	/* An exited process goes before a live one that was used less recently. */
	procs__maps(ps, kids[0], PROCS_SEQ_LATEST);
	procs__exited(ps, kids[2]);
	procs__maps(ps, kids[1], PROCS_SEQ_LATEST);
	procs__maps(ps, kids[0], PROCS_SEQ_LATEST);
	cr_assert_eq(procs__snapshot(ps, getpid(), 0, NULL, PROCS_SEQ_LATEST), 0);
	cr_assert_null(procs__name(ps, kids[2]), "the exited one was evicted");
	cr_assert_not_null(procs__name(ps, kids[0]));
	/* A child that is gone inherits its parent's snapshot. */
	kill(kids[1], SIGKILL);
	waitpid(kids[1], NULL, 0);
	cr_assert_eq(procs__snapshot(ps, kids[1], getpid(), "gone", PROCS_SEQ_LATEST), 0);
	cr_assert_str_eq(procs__name(ps, kids[1]), "gone");
	cr_assert_not_null(procs__maps(ps, kids[1], PROCS_SEQ_LATEST));
	for (int i = 0; i < 3; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	procs__free(ps);
}

/* Exited processes go once no profile can need them; live ones stay; a
 * profile's lookup never reads /proc for a pid it does not know (it may be
 * another process's now); set_limits evicts down to the new bound. */
Test(procs, expire_drops_exited_and_limits_apply)
{
	struct procs *ps = procs__new(0);
	struct procs_stats st;
	pid_t kid = fork();
	int64_t before;
	struct timespec ts;

	if (!kid) {
		pause();
		_exit(0);
	}
	cr_assert_not_null(ps);
	procs__stats(ps, &st);
	cr_assert_eq(st.max, PROCS_DEFAULT_MAX);
	cr_assert_eq(procs__snapshot(ps, getpid(), 0, NULL, PROCS_SEQ_LATEST), 0);
	cr_assert_eq(procs__snapshot(ps, kid, 0, NULL, PROCS_SEQ_LATEST), 0);
	cr_assert_null(procs__maps_known(ps, 1, PROCS_SEQ_LATEST), "init was never read");
	cr_assert_null(procs__name(ps, 1), "and maps_known did not read it");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	before = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	procs__exited(ps, kid);
	procs__expire(ps, before);
	cr_assert_not_null(procs__maps_known(ps, kid, PROCS_SEQ_LATEST),
			   "exited after the oldest profile began: kept");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	procs__expire(ps, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + 1);
	cr_assert_null(procs__maps_known(ps, kid, PROCS_SEQ_LATEST), "exited before: dropped");
	cr_assert_not_null(procs__maps_known(ps, getpid(), PROCS_SEQ_LATEST), "live: kept");
	procs__stats(ps, &st);
	cr_assert_eq(st.processes, 1);
	cr_assert_eq(st.exited, 0);

	/* 16 bytes of maps: cut, and counted. */
	procs__set_limits(ps, 1, 16, 0);
	cr_assert_eq(procs__snapshot(ps, getpid(), 0, NULL, PROCS_SEQ_LATEST), 0);
	cr_assert(procs__maps_known(ps, getpid(), PROCS_SEQ_LATEST)->truncated);
	procs__stats(ps, &st);
	cr_assert_eq(st.max, 1);
	cr_assert_eq(st.truncated, 1);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	procs__free(ps);
}

/* The kernel's exec count as the fake tracer reports it. */
static uint32_t fake_seq = 5;
static int fake_calls;

static uint32_t fake_kernel_seq(void *ctx, int pid)
{
	fake_calls++;
	return fake_seq;
}

Test(procs, a_read_of_another_generation_is_not_kept)
{
	struct procs *ps = procs__new(16);
	struct procs_stats st;
	int me = getpid();

	cr_assert(ps);
	procs__set_seq_source(ps, fake_kernel_seq, NULL);
	/* Generation 5 asked, process in 5 throughout: kept as 5. */
	cr_assert_eq(procs__snapshot(ps, me, 0, NULL, 5), 0);
	cr_assert(procs__maps_known(ps, me, 5));
	/* The process has exec'd twice since: generation 6 cannot be read,
	 * and is not given generation 5's or 7's mappings; 7, the one it is
	 * in, is read instead, once. */
	fake_seq = 7;
	cr_assert_eq(procs__snapshot(ps, me, 0, NULL, 6), 0);
	cr_assert_null(procs__maps_known(ps, me, 6));
	cr_assert(procs__maps_known(ps, me, 7));
	cr_assert(procs__maps_known(ps, me, 5), "what was read stays");
	procs__stats(ps, &st);
	cr_assert_eq(procs__snapshot(ps, me, 0, NULL, 6), -ESTALE, "7 is held: no read");
	{
		struct procs_stats st2;

		procs__stats(ps, &st2);
		cr_assert_eq(st2.maps_reads, st.maps_reads, "read again");
	}
	/* A read asked for "the newest" is filed under the kernel's count. */
	cr_assert_eq(procs__snapshot(ps, me, 0, NULL, PROCS_SEQ_LATEST), 0);
	cr_assert(procs__maps_known(ps, me, 7));
	cr_assert(procs__maps_known(ps, me, 5), "the previous generation is kept");
	cr_assert_null(procs__maps_known(ps, me, 4), "one never read has none");
	cr_assert_null(procs__maps_known(ps, me, 6));
	/* A sample of a later generation is read for (procs__maps) only when
	 * the process is still in it. */
	fake_seq = 9;
	cr_assert_null(procs__maps(ps, me, 8));
	cr_assert(procs__maps(ps, me, 9));
	procs__stats(ps, &st);
	cr_assert_eq(st.overtaken, 3, "overtaken: %" PRIu64, st.overtaken);
	procs__free(ps);
}

Test(procs, without_a_kernel_count_generations_are_as_asked)
{
	struct procs *ps = procs__new(16);
	int me = getpid();

	cr_assert(ps);
	cr_assert_eq(procs__snapshot(ps, me, 0, NULL, 3), 0);
	/* Nobody can tell which generation was read: any sample may use it. */
	cr_assert(procs__maps_known(ps, me, 3));
	cr_assert(procs__maps_known(ps, me, 4));
	procs__free(ps);
}
