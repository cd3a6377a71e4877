// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cli.h"
#include "daemon/log.h"

int cli__parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	/* strtol would also take leading spaces and a '+': " 5" is not a number. */
	if (!(*s >= '0' && *s <= '9') && !(*s == '-' && s[1] >= '0' && s[1] <= '9'))
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli__heap_sample_bytes(const char *arg, long *out)
{
	if (cli__parse_int(arg, 1, 1L << 40, out)) {
		log__error("--heap-sample-bytes must be 1..%ld, not '%s'", 1L << 40, arg);
		return -EINVAL;
	}
	return 0;
}

