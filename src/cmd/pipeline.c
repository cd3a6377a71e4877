// SPDX-License-Identifier: BSD-2-Clause
/*
 * pipeline: what record and serve both run: loop, BPF object, symbolizers, sampler (the
 * contract: pipeline.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include <event2/event.h>

#include "cmd/env.h"
#include "cmd/pipeline.h"
#include "cpu/sampler.h"
#include "cpu/cpu_bpf.h"
#include "heap/heap_bpf.h"
#include "lib/log.h"
#include "profile/builder.h"
#include "symbolizer/cfi.h"
#include "symbolizer/symbolizer.h"
#include "tracer/bpfobj.h"

/*
 * Each symbolizer keeps up to 3 descriptors per cached object (max_objects
 * of them, 256 by default), and there are two, beside the connections: more
 * than the soft limit of 1024 a shell gives.  As Go and systemd advise for
 * programs that do not use select(), raise the soft limit to the hard one.
 */
#define PIPELINE_FD_WANT 65536
#define PIPELINE_FD_LOW 4096

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < PIPELINE_FD_WANT && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < PIPELINE_FD_WANT ? rl.rlim_max : PIPELINE_FD_WANT;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < PIPELINE_FD_LOW)
		log__warn("the descriptor limit is %llu: with many binaries to symbolize, opening "
			  "them may fail (raise it to %d, e.g. LimitNOFILE=)",
			  (unsigned long long)rl.rlim_cur, PIPELINE_FD_LOW);
}

/*
 * libevent's own messages, which it would print on stderr as "[warn] ..."
 * (a descriptor epoll refused, an accept() error, a fatal check): through
 * the log, so that they carry a time and level and keep its format (a
 * collector reading --log-format=json lines would otherwise meet a bare
 * line).
 */
static void libevent_log(int severity, const char *msg)
{
	static const enum log_level levels[] = {
		[EVENT_LOG_DEBUG] = LOG_LVL_DEBUG, [EVENT_LOG_MSG] = LOG_LVL_INFO,
		[EVENT_LOG_WARN] = LOG_LVL_WARN, [EVENT_LOG_ERR] = LOG_LVL_ERROR,
	};

	log__msg(severity >= 0 && (size_t)severity < sizeof(levels) / sizeof(levels[0]) ?
			 levels[severity] : LOG_LVL_ERROR,
		 "libevent: %s", msg);
}

int pipeline__open(struct pipeline *p, bool heap, bool offcpu, int exit_hook,
		   const struct env *env)
{
	struct heap_bpf_prepare hp = {.heap = heap, .max_sites = env->heap_max_sites,
				      .max_live = env->heap_max_live};
	int err;

	memset(p, 0, sizeof(*p));
	raise_fd_limit();
	event_set_log_callback(libevent_log);
	p->base = event_base_new();
	if (!p->base) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = bpfobj__open(p->base,
			   &(struct bpfobj_opts){
				   /* The consumers' part: heap tracking's programs,
				    * the off-CPU program's tracepoint fields. */
				   .prepare = {{heap_bpf__prepare, &hp},
					       {cpu_bpf__offcpu_prepare, &offcpu}},
				   .libbpf_debug = env->debug,
				   .heap_probes_uprobe = env->heap_probes_uprobe,
				   .exit_hook = env->exit_hook >= 0 ? env->exit_hook : exit_hook,
				   .bench_cut_set = env->bench_cut_set,
				   .bench_cut = env->bench_cut,
				   .stack_max_set = env->stack_max_set,
				   .stack_max = env->stack_max,
				   .ring_kb = env->ring_kb,
				   .user_addr_mask = symbolizer__user_addr_mask(),
			   },
			   &p->obj);
	if (err)
		goto cleanup;
	p->sym = symbolizer__new(SYMBOLIZER_DEFAULT_MAX_BYTES);
	/* One debuginfod fetcher for both: the unwinder meets an object at
	 * its first sample and asks for its debug file, the build finds it. */
	p->unwind_sym = p->sym ? symbolizer__new_unwinder(SYMBOLIZER_DEFAULT_MAX_BYTES, p->sym) :
				 NULL;
	if (!p->sym || !p->unwind_sym) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = sampler__new(p->base, p->obj, p->unwind_sym,
			   &(struct sampler_opts){.debug_unwind = env->debug_unwind,
						  .trace_unwind = env->trace_unwind},
			   &p->sm);
	err = err ?: builder__new(p->base, env->fault_build_delay_ms, &p->builder);
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
	symbolizer__free(p->unwind_sym);	/* before sym: it uses sym's debuginfod */
	symbolizer__free(p->sym);
	bpfobj__free(p->obj);
	if (p->base)
		event_base_free(p->base);
	memset(p, 0, sizeof(*p));
}
