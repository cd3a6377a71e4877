// SPDX-License-Identifier: BSD-2-Clause
/*
 * Process titles (proctitle__parse): any user sets their own process's
 * title.  The first byte picks the comm (postgres or not), the rest is the
 * raw /proc/PID/cmdline; every label must come back NUL-terminated,
 * bounded and printable, as proctitle.h promises.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proctitle.h"

static void check_label(const char *l)
{
	size_t n = strnlen(l, PROCTITLE_LABEL_MAX);

	if (n >= PROCTITLE_LABEL_MAX)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)l[i] < 0x20 || l[i] == 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const comms[] = {"postgres", "postmaster", "evil", NULL};
	struct proctitle out;
	const char *comm;
	char *title;

	if (!size)
		return 0;
	comm = comms[data[0] % 4];
	/* An exact-size copy: ASan sees any read past len. */
	title = malloc(size - 1 ? size - 1 : 1);
	if (!title)
		return 0;
	memcpy(title, data + 1, size - 1);
	if (proctitle__parse(comm, size > 1 ? title : NULL, size - 1, &out) == 1) {
		check_label(out.backend_type);
		check_label(out.database);
		check_label(out.user);
	}
	free(title);
	return 0;
}
