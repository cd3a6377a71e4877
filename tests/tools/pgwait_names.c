// SPDX-License-Identifier: BSD-2-Clause
/*
 * pgwait_names MAJOR CLASS:COUNT...: the names profd gives PostgreSQL
 * MAJOR's wait events, one "0xID NAME" line per id (NAME "-" where profd
 * has none), for ids 0 to COUNT-1 of each class (hex), in the order given.
 * tests/sys/t_pgwait_names.sh sets this beside the server's own names.
 */
#include <stdio.h>
#include <stdlib.h>

#include "proc/pgwaitnames.h"

int main(int argc, char **argv)
{
	unsigned long major;
	char *end;

	if (argc < 3 || (major = strtoul(argv[1], &end, 10)) == 0 || *end) {
		fprintf(stderr, "usage: pgwait_names MAJOR CLASS:COUNT...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		unsigned long cls = strtoul(argv[i], &end, 16), n;

		if (*end != ':' || cls > 0xff || (n = strtoul(end + 1, &end, 10)) > 0x10000 || *end) {
			fprintf(stderr, "pgwait_names: bad range %s\n", argv[i]);
			return 2;
		}
		for (unsigned long ev = 0; ev < n; ev++) {
			unsigned id = (unsigned)(cls << 24 | ev);
			const char *name = pgwaitnames__event(id, (unsigned)major);

			printf("0x%08X %s\n", id, name ? name : "-");
		}
	}
	return 0;
}
