// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <string.h>

#include <event2/event.h>

#include "daemon/bpfobj.h"
#include "daemon/builder.h"
#include "daemon/log.h"
#include "daemon/pipeline.h"
#include "daemon/sampler.h"
#include "symbolizer/symbolizer.h"

int pipeline__open(struct pipeline *p, bool heap)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->base = event_base_new();
	if (!p->base) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = bpfobj__open(p->base, &(struct bpfobj_opts){.heap = heap}, &p->obj);
	if (err)
		goto cleanup;
	p->sym = symbolizer__new(SYMBOLIZER_DEFAULT_MAX_BYTES);
	p->unwind_sym = symbolizer__new(SYMBOLIZER_DEFAULT_MAX_BYTES);
	if (!p->sym || !p->unwind_sym) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = sampler__new(p->base, p->obj, p->sym, p->unwind_sym, &p->sm);
	err = err ?: builder__new(p->base, &p->builder);
	if (err)
		goto cleanup;
	return 0;
cleanup:
	if (err == -ENOMEM)
		log__error("out of memory");
	pipeline__close(p);
	return err;
}

void pipeline__close(struct pipeline *p)
{
	/* First: its jobs hold sessions and use sym. */
	builder__free(p->builder);
	sampler__free(p->sm);
	symbolizer__free(p->sym);
	symbolizer__free(p->unwind_sym);
	bpfobj__free(p->obj);
	if (p->base)
		event_base_free(p->base);
	memset(p, 0, sizeof(*p));
}
