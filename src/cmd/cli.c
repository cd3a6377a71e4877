// SPDX-License-Identifier: BSD-2-Clause
/* cli: option checks the commands share (the contract: cli.h). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "heap/heap.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "profile/labels.h"
#include "profile/memgov.h"
#include "symbolizer/symbolizer.h"
#include "tracer/targets.h"

int cli__heap_sample_bytes(const char *arg, long *out)
{
	if (parse__int(arg, 1, 1L << 40, out)) {
		log__error("--heap-sample-bytes must be 1..%ld, not '%s'", 1L << 40, arg);
		return -EINVAL;
	}
	return 0;
}

int cli__offcpu_period(const char *arg, long *out)
{
	if (parse__int(arg, CLI_OFFCPU_PERIOD_MIN, CLI_OFFCPU_PERIOD_MAX, out)) {
		log__error("--off-cpu-period-us must be %d..%d, not '%s'", CLI_OFFCPU_PERIOD_MIN,
			   CLI_OFFCPU_PERIOD_MAX, arg);
		return -EINVAL;
	}
	return 0;
}

int cli__max_memory(const char *arg, size_t *out)
{
	long v;

	if (parse__int(arg, 0, MEMGOV_MAX_MEMORY_MAX, &v) || (v && v < MEMGOV_MAX_MEMORY_MIN)) {
		log__error("--max-memory must be %d..%ld MiB, or 0 for no limit, not '%s'",
			   MEMGOV_MAX_MEMORY_MIN, MEMGOV_MAX_MEMORY_MAX, arg ? arg : "");
		return -EINVAL;
	}
	*out = v ? (size_t)v : MEMGOV_MAX_MEMORY_NONE;
	return 0;
}

int cli__heap_budget(const char *arg, double *out)
{
	char *end;
	double v;

	/* strtod would take " 5", "+5", "inf", "nan" and hex: digits and a point only. */
	if (!arg || !(*arg >= '0' && *arg <= '9') || strspn(arg, "0123456789.") != strlen(arg))
		goto bad;
	errno = 0;
	v = strtod(arg, &end);
	if (errno || *end || !isfinite(v) || v < 0 || v > HEAP_BUDGET_MAX)
		goto bad;
	*out = v;
	return 0;
bad:
	log__error("--heap-budget must be a percent of one CPU, 0..%g (0: none), not '%s'",
		   HEAP_BUDGET_MAX, arg ? arg : "");
	return -EINVAL;
}

int cli__pid(struct targets *t, const char *arg)
{
	int err = targets__add_pid_arg(t, arg);

	if (err)
		log__error("--pid: not a process id: '%s'", arg);
	return err;
}

int cli__exe(struct targets *t, const char *arg)
{
	int err = targets__add_exe(t, arg);

	if (err)
		log__error("--exe: needs a name or a path");
	return err;
}

int cli__labels(const char *arg, unsigned *out)
{
	char errbuf[512];
	int err = labels__parse(arg, out, errbuf, sizeof(errbuf));

	if (err)
		log__error("--%s", errbuf);
	return err;
}

int cli__log_level(const char *arg, int *out)
{
	enum log_level l;

	if (log__parse_level(arg, &l)) {
		log__error("--log-level must be error, warn, info or debug, not '%s'", arg ? arg : "");
		return -EINVAL;
	}
	*out = l;
	return 0;
}

int cli__scratch_dir(const char *arg)
{
	if (!arg || (arg[0] && arg[0] != '/') || strlen(arg) >= PATH_MAX) {
		log__error("--scratch-dir must be an absolute directory, or \"\" for none, not '%s'",
			   arg ? arg : "");
		return -EINVAL;
	}
	symbolizer__set_scratch_dir(arg);
	return 0;
}

int cli__log_format(const char *arg, int *out)
{
	enum log_format f;

	if (log__parse_format(arg, &f)) {
		log__error("--log-format must be text, logfmt or json, not '%s'", arg ? arg : "");
		return -EINVAL;
	}
	*out = f;
	return 0;
}
