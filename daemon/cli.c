// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "log.h"

int cli__parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
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

int target_list__add_pid(struct target_list *tl, const char *arg)
{
	int *np;
	long pid;

	if (cli__parse_int(arg, 1, INT_MAX, &pid))
		return -EINVAL;
	np = realloc(tl->pids, (tl->npids + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	tl->pids = np;
	tl->pids[tl->npids++] = (int)pid;
	return 0;
}

int target_list__add_exe(struct target_list *tl, const char *arg)
{
	char **ne;

	if (!arg || !*arg)
		return -EINVAL;
	ne = realloc(tl->exes, (tl->nexes + 1) * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	tl->exes = ne;
	tl->exes[tl->nexes] = strdup(arg);
	if (!tl->exes[tl->nexes])
		return -ENOMEM;
	tl->nexes++;
	return 0;
}

struct targets target_list__targets(const struct target_list *tl)
{
	return (struct targets){
		.pids = tl->pids,
		.npids = tl->npids,
		.exes = (const char *const *)tl->exes,
		.nexes = tl->nexes,
	};
}

void target_list__free(struct target_list *tl)
{
	for (size_t i = 0; i < tl->nexes; i++)
		free(tl->exes[i]);
	free(tl->exes);
	free(tl->pids);
	memset(tl, 0, sizeof(*tl));
}
