// SPDX-License-Identifier: BSD-2-Clause
/*
 * PostgreSQL's wait events: their names as pg_stat_activity writes them
 * (PostgreSQL 13 to 17, each numbering them its own way), and where a process keeps
 * my_wait_event_info, found in Debian's postgres 15 over a directory laid
 * out like /proc.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc/pgwait.h"
#include "proc/pgwaitnames.h"

#define PG15 "/usr/lib/postgresql/15/bin/postgres"

struct fmt_case {
	uint32_t id, major;
	const char *want;
};

/*
 * The ids are PostgreSQL's own (wait_event.h's enums for 14-16, 17's
 * wait_event_names.txt order, lwlocknames.txt's slots, lwlock.h's
 * BuiltinTrancheIds), written here by hand, not read from the tables.
 */
static const struct fmt_case fmt_cases[] = {
	/* The issue's five, in each version. */
	{0x01000008, 14, "LWLock:WALWrite"},	/* WALWriteLock, slot 8 */
	{0x03000005, 14, "Lock:transactionid"},	/* LOCKTAG_TRANSACTION */
	{0x0A00000F, 14, "IO:DataFileRead"},
	{0x06000000, 14, "Client:ClientRead"},
	{0x09000001, 14, "Timeout:PgSleep"},
	{0x01000008, 15, "LWLock:WALWrite"},
	{0x03000005, 15, "Lock:transactionid"},
	{0x0A000011, 15, "IO:DataFileRead"},
	{0x06000000, 15, "Client:ClientRead"},
	{0x09000002, 15, "Timeout:PgSleep"},
	{0x01000008, 16, "LWLock:WALWrite"},
	{0x03000005, 16, "Lock:transactionid"},
	{0x0A000011, 16, "IO:DataFileRead"},
	{0x06000000, 16, "Client:ClientRead"},
	{0x09000002, 16, "Timeout:PgSleep"},
	{0x01000008, 17, "LWLock:WALWrite"},
	{0x03000005, 17, "Lock:transactionid"},
	{0x0A000011, 17, "IO:DataFileRead"},
	{0x06000000, 17, "Client:ClientRead"},
	{0x09000002, 17, "Timeout:PgSleep"},
	{0x09000001, 13, "Timeout:PgSleep"},	/* bullseye's, while it is cheap */
	/* One id, four meanings: 14 added nothing before PgSleep, 15 did. */
	{0x09000001, 15, "Timeout:CheckpointWriteDelay"},
	{0x0A00000F, 15, "IO:DataFileImmediateSync"},
	{0x0A000001, 14, "IO:BufFileRead"},
	{0x0A000001, 15, "IO:BaseBackupSync"},
	/* 16 inserted events in order: its ids after them are 15's plus one. */
	{0x0A000015, 15, "IO:DSMFillZeroWrite"},
	{0x0A000015, 16, "IO:DSMAllocate"},
	{0x0A000015, 17, "IO:DsmAllocate"},	/* 17 spells them from the symbol */
	{0x05000007, 14, "Activity:PgStatMain"},
	{0x05000007, 15, "Activity:RecoveryWalStream"},
	{0x05000007, 16, "Activity:LogicalParallelApplyMain"},
	{0x08000013, 15, "IPC:HashGrowBatchesAllocate"},
	{0x08000013, 16, "IPC:HashGrowBatchesDecide"},
	{0x08000013, 17, "IPC:HashBuildHashInner"},
	{0x05000001, 15, "Activity:AutoVacuumMain"},
	{0x05000001, 17, "Activity:AutovacuumMain"},
	/* LWLock: individual locks, then the built-in tranches. */
	{0x01000004, 16, "LWLock:ProcArray"},
	{0x0100000B, 16, "LWLock:XactSLRU"},
	{0x0100000B, 17, "LWLock:0x0100000B"},	/* 17 made SLRU locks banks */
	{0x01000030, 15, "LWLock:XactBuffer"},	/* NUM_INDIVIDUAL_LWLOCKS 48 */
	{0x01000035, 17, "LWLock:XactBuffer"},	/* 53 in 17 */
	{0x01000030, 17, "LWLock:WaitEventCustom"},
	{0x0100003D, 13, "LWLock:BufferMapping"},	/* 13 still had BufferIO */
	{0x0100003D, 14, "LWLock:LockManager"},
	{0x0100003D, 17, "LWLock:BufferContent"},
	{0x0100004A, 15, "LWLock:PgStatsData"},
	{0x0100004A, 14, "LWLock:0x0100004A"},	/* past 14's last tranche */
	{0x0100004C, 16, "LWLock:LogicalRepLauncherHash"},
	{0x0100004C, 15, "LWLock:0x0100004C"},	/* an extension's tranche */
	{0x0100000A, 15, "LWLock:0x0100000A"},	/* slot 10, CheckpointLock's */
	{0x0100000A, 13, "LWLock:Checkpoint"},
	{0x0100FFFF, 17, "LWLock:0x0100FFFF"},
	/* Lock: the tag's type; 16 added one. */
	{0x03000000, 17, "Lock:relation"},
	{0x0300000A, 14, "Lock:advisory"},
	{0x0300000B, 15, "Lock:0x0300000B"},
	{0x0300000B, 16, "Lock:applytransaction"},
	/* BufferPin and Extension: 13-16 name every id after the class, 17
	 * only its first; an extension's own are names only its server has. */
	{0x04000000, 15, "BufferPin:BufferPin"},
	{0x04000000, 17, "BufferPin:BufferPin"},
	{0x07000001, 16, "Extension:Extension"},
	{0x07000000, 17, "Extension:Extension"},
	{0x07000001, 17, "Extension:0x07000001"},
	{0x0B000001, 17, "InjectionPoint:0x0B000001"},
	/* unknown ids keep their class */
	{0x0A0000FF, 15, "IO:0x0A0000FF"},
	{0x0A000046, 14, "IO:LogicalChangesRead"},	/* appended by a 14.x */
	{0x0A00004A, 14, "IO:0x0A00004A"},
	{0x03000040, 15, "Lock:0x03000040"},
	{0x050000FF, 17, "Activity:0x050000FF"},
	/* an unknown major: class and id */
	{0x09000002, 18, "Timeout:0x09000002"},
	{0x06000000, 0, "Client:0x06000000"},
	{0x01000008, 12, "LWLock:0x01000008"},
	/* no such class */
	{0x0B000001, 15, "0x0B000001"},
	{0x2A000001, 15, "0x2A000001"},
	{0xFF000000, 17, "0xFF000000"},
};

Test(pgwait, format)
{
	char buf[64];

	for (size_t i = 0; i < sizeof(fmt_cases) / sizeof(fmt_cases[0]); i++) {
		const struct fmt_case *c = &fmt_cases[i];

		pgwait__format(c->id, c->major, buf, sizeof(buf));
		cr_expect_str_eq(buf, c->want, "%#x (PostgreSQL %u)", c->id, c->major);
	}
	/* A short buffer is cut, and ends. */
	pgwait__format(0x09000002, 15, buf, 8);
	cr_expect_str_eq(buf, "Timeout");
}

/*
 * Every event a version's table has is found (bsearch needs them sorted),
 * and the counts are the sources': 14.23's and 16's enums, the 13, 15 and
 * 17 binaries' switches.
 */
Test(pgwait, counts)
{
	static const struct {
		uint32_t major, events, lwlocks, locks;
	} want[] = {
		/* LWLocks: named individual slots + built-in tranches */
		{13, 138, 46 + 25, 11}, {14, 149, 45 + 24, 11}, {15, 154, 45 + 27, 11},
		{16, 158, 45 + 29, 12}, {17, 170, 42 + 39, 12},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint32_t events = 0, lwlocks = 0, locks = 0;

		for (uint32_t cls = 0x05; cls <= 0x0A; cls++)
			for (uint32_t ev = 0; ev < 0x100; ev++)
				events += cls != 0x07 &&
					  pgwaitnames__event(cls << 24 | ev, want[i].major);
		for (uint32_t ev = 0; ev < 0x100; ev++) {
			lwlocks += !!pgwaitnames__event(0x01000000 | ev, want[i].major);
			locks += !!pgwaitnames__event(0x03000000 | ev, want[i].major);
		}
		cr_expect_eq(events, want[i].events, "PostgreSQL %u: %u events", want[i].major,
			     events);
		cr_expect_eq(lwlocks, want[i].lwlocks, "PostgreSQL %u: %u LWLocks", want[i].major,
			     lwlocks);
		cr_expect_eq(locks, want[i].locks, "PostgreSQL %u", want[i].major);
	}
}

/* The whole file, for looking names up in it. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/*
 * Each name profd gives major's events is a string in that postgres (the
 * NUL that ends it included).  An older minor release may lack its class's
 * last event, one a later minor appended (15.20's WalReceiverUpstreamCatchup
 * is not in bookworm's first 15s): that one is only logged.
 */
static size_t check_binary(uint32_t major, const char *path)
{
	size_t len = 0, missing = 0, names = 0;
	char *bin = slurp(path, &len);

	if (!bin)
		return 0;
	for (uint32_t cls = 0x01; cls <= 0x0A; cls++)
		for (uint32_t ev = 0; ev < 0x100; ev++) {
			const char *n = pgwaitnames__event(cls << 24 | ev, major);

			if (!n)
				continue;
			names++;
			if (memmem(bin, len, n, strlen(n) + 1))
				continue;
			if (cls >= 0x05 && !pgwaitnames__event(cls << 24 | (ev + 1), major)) {
				cr_log_info("PostgreSQL %u: %s, last of its class, not in %s (an "
					    "older minor)", major, n, path);
				continue;
			}
			missing++;
			cr_log_error("PostgreSQL %u: no \"%s\" in %s", major, n, path);
		}
	cr_expect_gt(names, 150, "PostgreSQL %u: %zu names", major, names);
	cr_expect_eq(missing, 0, "PostgreSQL %u: %zu of %zu names not in %s", major, missing,
		     names, path);
	free(bin);
	return 1;
}

/*
 * The names against the binaries themselves: Debian 12's 15 here, and
 * whichever of 13-17 are installed or unpacked for the VM tests
 * (tests/roots/suite.sh: bullseye's 13, trixie's 17).
 */
Test(pgwait, names_in_binary)
{
	const char *cache = getenv("PROFD_VM_CACHE");
	size_t checked = 0;

	for (uint32_t major = 13; major <= 17; major++) {
		char path[PATH_MAX];
		glob_t g;

		snprintf(path, sizeof(path), "/usr/lib/postgresql/%u/bin/postgres", major);
		checked += check_binary(major, path);
		snprintf(path, sizeof(path), "%s/roots/*-pg-*/usr/lib/postgresql/%u/bin/postgres",
			 cache ? cache : "/var/cache/profd-vm", major);
		if (glob(path, 0, NULL, &g))
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++)
			checked += check_binary(major, g.gl_pathv[i]);
		globfree(&g);
	}
	cr_log_info("%zu postgres binaries checked", checked);
	if (!checked)
		cr_skip_test("no postgres binary of 13-17");
}

static char root[64];

static void root_setup(void)
{
	strcpy(root, "/tmp/profd-pgwait.XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void root_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
}

/* ROOT/PID/exe -> target, and ROOT/PID/maps mapping it at start. */
static void fake_process(int pid, const char *target, uint64_t start)
{
	char path[160];
	struct stat st;
	FILE *f;

	cr_assert_eq(stat(target, &st), 0);
	snprintf(path, sizeof(path), "%s/%d", root, pid);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/exe", root, pid);
	cr_assert_eq(symlink(target, path), 0);
	snprintf(path, sizeof(path), "%s/%d/maps", root, pid);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "7f0000000000-7f0000001000 r--p 00000000 00:00 0 \n");
	fprintf(f, "%" PRIx64 "-%" PRIx64 " r--p 00000000 %02x:%02x %llu %s\n", start,
		start + 0x1000, major(st.st_dev), minor(st.st_dev),
		(unsigned long long)st.st_ino, target);
	fclose(f);
}

/* my_wait_event_info's value in the file, as readelf reads it. */
static uint64_t readelf_value(void)
{
	FILE *p = popen("readelf --dyn-syms -W " PG15 " | awk '$8 == \"my_wait_event_info\" "
			"{print $2}'", "r");
	unsigned long long v = 0;

	cr_assert_not_null(p);
	cr_assert_eq(fscanf(p, "%llx", &v), 1);
	pclose(p);
	return v;
}

Test(pgwait, info_addr, .init = root_setup, .fini = root_teardown)
{
	uint64_t addr = 0, start = 0x555555554000ull;
	uint32_t major = 0;

	if (access(PG15, R_OK))
		cr_skip_test("no " PG15);
	fake_process(100, PG15, start);
	cr_assert_eq(pgwait__info_addr(root, 100, &addr, &major), 0);
	cr_expect_eq(major, 15);
	cr_expect_eq(addr, start + readelf_value(), "%#" PRIx64, addr);
	/* Not exported: /bin/true has no my_wait_event_info. */
	fake_process(101, "/bin/true", start);
	cr_expect_eq(pgwait__info_addr(root, 101, &addr, &major), -ENOENT);
	cr_expect_eq(major, 0);
	/* Gone, or never there. */
	cr_expect_lt(pgwait__info_addr(root, 102, &addr, &major), 0);
	cr_expect_lt(pgwait__info_addr(root, -1, &addr, &major), 0);
}
