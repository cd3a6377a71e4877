// SPDX-License-Identifier: BSD-2-Clause
/*
 * /proc/PID/stat lines (procstat__parse): the comm in them is whatever a
 * process named itself, parentheses and all.  The parser must read only
 * the line, keep the comm NUL-terminated and bounded, and say -EINVAL or
 * 0, never anything else.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/procstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procstat ps;
	char *line = malloc(size + 1);	/* exact: ASan sees a read past the NUL */
	int rc;

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	rc = procstat__parse(line, &ps);
	if (rc != 0 && rc != -EINVAL)
		abort();
	if (strnlen(ps.comm, sizeof(ps.comm)) >= sizeof(ps.comm))
		abort();
	if (rc == 0 && ps.ppid < 0)
		abort();
	free(line);
	return 0;
}
