// SPDX-License-Identifier: BSD-2-Clause
/* source: the calls through a profile source's ops (source.h). */
#include <stddef.h>

#include "profile/source.h"

int profile_source__snapshot(struct profile_source *src)
{
	return src->ops->snapshot(src);
}

int profile_source__build(struct profile_source *src, struct symbolizer *sym, struct pprof **out)
{
	return src->ops->build(src, sym, out);
}

void profile_source__free(struct profile_source *src)
{
	if (src)
		src->ops->free(src);
}

int profile_source__pprof(struct profile_source *src, struct symbolizer *sym, struct pprof **out)
{
	return profile_source__snapshot(src) ?: profile_source__build(src, sym, out);
}
