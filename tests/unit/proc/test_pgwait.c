// SPDX-License-Identifier: BSD-2-Clause
/*
 * PostgreSQL's wait events: their names as pg_stat_activity writes them
 * (PostgreSQL 15 named, others by class and id), and where a process keeps
 * my_wait_event_info, found in Debian's postgres 15 over a directory laid
 * out like /proc.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc/pgwait.h"

#define PG15 "/usr/lib/postgresql/15/bin/postgres"

struct fmt_case {
	uint32_t id, major;
	const char *want;
};

static const struct fmt_case fmt_cases[] = {
	{0x09000002, 15, "Timeout:PgSleep"},
	{0x06000000, 15, "Client:ClientRead"},
	{0x05000000, 15, "Activity:ArchiverMain"},
	{0x03000005, 15, "Lock:transactionid"},
	{0x04000000, 15, "BufferPin:BufferPin"},
	/* unknown ids keep their class */
	{0x0A0000FF, 15, "IO:0x0A0000FF"},
	{0x03000040, 15, "Lock:0x03000040"},
	{0x01000010, 15, "LWLock:0x01000010"},
	{0x07000001, 15, "Extension:0x07000001"},
	/* other versions number their events otherwise: ids */
	{0x09000002, 16, "Timeout:0x09000002"},
	{0x06000000, 0, "Client:0x06000000"},
	/* no such class */
	{0x2A000001, 15, "0x2A000001"},
	{0xFF000000, 15, "0xFF000000"},
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
