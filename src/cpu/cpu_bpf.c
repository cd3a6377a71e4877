// SPDX-License-Identifier: BSD-2-Clause
/* cpu_bpf: the CPU sampler's programs and maps, by name (the contract: cpu_bpf.h). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "bpf/abi/cpu.h"
#include "bpf/abi/offcpu.h"
#include "bpf/abi/targets.h"
#include "bpf/profd.skel.h"
#include "cpu/cpu_bpf.h"
#include "lib/log.h"
#include "tracer/bpfobj.h"
#include "tracer/tracefs.h"

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

/* Slots of offcpu_threads for tid_words words of tids: the power of two
 * that holds them all, at most PROFD_OFFCPU_SLOTS_MAX. */
static uint32_t offcpu_slots(uint32_t tid_words)
{
	uint64_t tids = (uint64_t)tid_words * 64;
	uint32_t n = 64;

	while (n < PROFD_OFFCPU_SLOTS_MAX && n < tids)
		n <<= 1;
	return n;
}

void cpu_bpf__offcpu_prepare(struct profd_bpf *skel, const struct kernel_features *f, void *ctx)
{
	struct tracefs_field state, next;
	uint32_t slots;
	int err;

	if (!*(const bool *)ctx) {
		bpf_program__set_autoload(skel->progs.profd_offcpu, false);
		bpf_map__set_max_entries(skel->maps.offcpu_threads, 1);
		bpf_map__set_max_entries(skel->maps.offcpu_waiting, 1);
		return;
	}
	err = tracefs__field("sched", "sched_switch", "prev_state", &state);
	err = err ?: tracefs__field("sched", "sched_switch", "next_pid", &next);
	if (!err && (next.size != 4 || (state.size != 8 && state.size != 4)))
		err = -EINVAL;
	if (err) {
		log__info("off-CPU profiles are off: no usable sched:sched_switch in tracefs (%s)",
			  strerror(-err));
		bpf_program__set_autoload(skel->progs.profd_offcpu, false);
		bpf_map__set_max_entries(skel->maps.offcpu_threads, 1);
		bpf_map__set_max_entries(skel->maps.offcpu_waiting, 1);
		return;
	}
	/* As tgid_bits, from the pid_max bpfobj read before the prepares;
	 * and a slot per tid up to PROFD_OFFCPU_SLOTS_MAX, in sets of two (abi/offcpu.h). */
	slots = offcpu_slots(skel->rodata->tid_words);
	bpf_map__set_max_entries(skel->maps.offcpu_waiting, skel->rodata->tid_words);
	bpf_map__set_max_entries(skel->maps.offcpu_threads, slots);
	skel->rodata->offcpu_set_mask = slots / 2 - 1;
	skel->rodata->switch_prev_state = state.offset;
	skel->rodata->switch_prev_state_size = state.size;
	skel->rodata->switch_next_pid = next.offset;
}

bool cpu_bpf__offcpu_loaded(struct bpfobj *o)
{
	return bpf_program__fd(bpfobj__skel(o)->progs.profd_offcpu) >= 0;
}

void cpu_bpf__offcpu_set(struct bpfobj *o, uint32_t mask, uint32_t all, uint32_t exe,
			 uint32_t wall)
{
	struct profd_bpf *s = bpfobj__skel(o);

	/* Which sessions first, then that there are any: the program reads
	 * offcpu_mask before the others. */
	s->bss->offcpu_all = all;
	s->bss->offcpu_exe = exe;
	s->bss->offcpu_wall = wall;
	__atomic_store_n(&s->bss->offcpu_mask, mask, __ATOMIC_RELEASE);
}

void cpu_bpf__offcpu_set_period(struct bpfobj *o, uint64_t ns)
{
	bpfobj__skel(o)->data->offcpu_period_ns = ns;
}

struct bpf_link *cpu_bpf__offcpu_attach(struct bpfobj *o)
{
	struct profd_bpf *s = bpfobj__skel(o);

	s->bss->offcpu_epoch++;
	return bpf_program__attach(s->progs.profd_offcpu);
}

int cpu_bpf__offcpu_stats(struct bpfobj *o, uint64_t *sum)
{
	return bpfobj__percpu_sum(bpf_map__fd(bpfobj__skel(o)->maps.offcpu_stats), 0,
				  PROFD_OSTAT_NR, sum);
}

int cpu_bpf__offcpu_thread(struct bpfobj *o, uint32_t tid, struct profd_offcpu_thread *out)
{
	struct profd_bpf *s = bpfobj__skel(o);
	int fd = bpf_map__fd(s->maps.offcpu_threads);

	/* The two ways of its set, as offcpu.bpf.c's thread_find. */
	for (uint32_t way = 0; way < 2; way++) {
		uint32_t key = PROFD_OFFCPU_KEY(tid, s->rodata->offcpu_set_mask, way);

		if (!bpf_map_lookup_elem(fd, &key, out) && out->tid == tid &&
		    out->epoch == s->bss->offcpu_epoch)
			return 0;
	}
	return -ENOENT;
}
