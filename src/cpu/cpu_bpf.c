// SPDX-License-Identifier: BSD-2-Clause
/* cpu_bpf: the CPU sampler's programs and maps, by name (the contract: cpu_bpf.h). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>

#include "bpf/abi/cpu.h"
#include "bpf/abi/targets.h"
#include "bpf/profd.skel.h"
#include "cpu/cpu_bpf.h"
#include "tracer/bpfobj.h"

int cpu_bpf__set_session(struct bpfobj *o, uint32_t slot, const struct profd_session_cfg *cfg)
{
	__u32 key = slot;

	if (bpf_map_update_elem(bpf_map__fd(bpfobj__skel(o)->maps.sessions), &key, cfg, BPF_ANY))
		return -errno;
	return 0;
}

int cpu_bpf__stats(struct bpfobj *o, uint32_t slot, uint64_t *sum)
{
	return bpfobj__percpu_sum(bpf_map__fd(bpfobj__skel(o)->maps.stats), slot * PROFD_STAT_NR,
				  PROFD_STAT_NR, sum);
}

void cpu_bpf__zero_stats(struct bpfobj *o, uint32_t slot)
{
	bpfobj__percpu_zero(bpf_map__fd(bpfobj__skel(o)->maps.stats), slot * PROFD_STAT_NR,
			    PROFD_STAT_NR);
}

struct bpf_link *cpu_bpf__attach(struct bpfobj *o, int fd, uint32_t slot)
{
	LIBBPF_OPTS(bpf_perf_event_opts, popts, .bpf_cookie = slot);

	return bpf_program__attach_perf_event_opts(bpfobj__skel(o)->progs.profd_sample, fd, &popts);
}
