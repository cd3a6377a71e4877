// SPDX-License-Identifier: BSD-2-Clause
/* job: a profile built through its source and rendered (the contract: job.h). */
#include <stdlib.h>

#include "lib/clock.h"
#include "pprof/pprof.h"
#include "profile/job.h"
#include "profile/labels.h"
#include "profile/source.h"

int profile_job__build(struct profile_job *j, struct symbolizer *sym)
{
	struct pprof *p = NULL;
	int64_t cpu0;
	int err;

	err = profile_source__build(j->src, sym, &p);
	if (err) {
		j->failed = j->src->ops->building;
		return err;
	}
	cpu0 = clock__thread_cpu_ns();
	if (j->render.format == RENDER_PPROF && (j->limits.max_samples || j->limits.max_bytes)) {
		const char *keep[8];

		labels__names(LABELS_DEFAULT, keep, sizeof(keep) / sizeof(keep[0]));
		err = pprof__coarsen(&p, &j->limits, keep, &j->coarsen);
		if (err) {
			pprof__free(p);
			j->failed = "coarsening the profile to its limits";
			return err;
		}
	}
	err = render__profile(p, &j->render, &j->data, &j->len);
	pprof__free(p);
	if (err) {
		j->failed = "encoding the profile";
		return err;
	}
	j->render_cpu_ns = clock__thread_cpu_ns() - cpu0;
	return 0;
}

void profile_job__release(struct profile_job *j)
{
	profile_source__free(j->src);
	j->src = NULL;
	free(j->data);
	j->data = NULL;
}
