// SPDX-License-Identifier: BSD-2-Clause
/* heap_bpf: heap tracking's programs, maps and globals, by name (the contract: heap_bpf.h). */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/abi/heap.h"
#include "bpf/abi/targets.h"
#include "bpf/profd.skel.h"
#include "heap/heap_bpf.h"
#include "tracer/bpfobj.h"
#include "tracer/kernel.h"

void heap_bpf__prepare(struct profd_bpf *s, const struct kernel_features *f, void *ctx)
{
	const struct heap_bpf_prepare *p = ctx;
	bool heap = p->heap;

	bpf_program__set_autoload(s->progs.profd_heap_session, heap && f->uprobe_session);
	/* The pair also serves per-target probes (tracefs probes take no
	 * session program), on every kernel. */
	bpf_program__set_autoload(s->progs.profd_heap_entry, heap);
	bpf_program__set_autoload(s->progs.profd_heap_return, heap);
	if (heap && f->uprobe_session)
		bpf_program__set_expected_attach_type(s->progs.profd_heap_session,
						      f->uprobe_session_type);
	if (!heap) {
		/* Maps cost locked memory even unused. */
		bpf_map__set_max_entries(s->maps.heap_live, 1);
		bpf_map__set_max_entries(s->maps.heap_allocs, 1);
		bpf_map__set_max_entries(s->maps.heap_stacks, 1);
		bpf_map__set_max_entries(s->maps.heap_calls, 1);
	} else {
		if (p->max_sites)
			bpf_map__set_max_entries(s->maps.heap_allocs, p->max_sites);
		if (p->max_live)
			bpf_map__set_max_entries(s->maps.heap_live, p->max_live);
	}
}

bool heap_bpf__loaded(struct bpfobj *o)
{
	return bpf_program__fd(bpfobj__skel(o)->progs.profd_heap_entry) >= 0 ||
	       bpf_program__fd(bpfobj__skel(o)->progs.profd_heap_session) >= 0;
}

void heap_bpf__set_scope(struct bpfobj *o, bool all, bool by_exe)
{
	bpfobj__skel(o)->bss->heap_all = all;
	bpfobj__skel(o)->bss->heap_by_exe = by_exe;
}

void heap_bpf__set_sample_bytes(struct bpfobj *o, uint64_t bytes)
{
	bpfobj__skel(o)->bss->heap_sample_bytes = bytes;
}

void heap_bpf__stats(struct bpfobj *o, uint64_t *sum)
{
	bpfobj__percpu_sum(bpf_map__fd(bpfobj__skel(o)->maps.heap_stats), 0, PROFD_HSTAT_NR, sum);
}

/*
 * BPF_LINK_CREATE for a uprobe_multi session link, by hand: Debian 12's
 * libbpf (1.1) and uapi headers predate uprobe_multi.  The layout is the
 * kernel's UAPI union bpf_attr link_create.uprobe_multi (Linux 6.6+); the
 * attach type comes from the kernel's own BTF (kernel_features).
 */
struct link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 um_flags;
	__u32 pid;
};

int heap_bpf__attach_session(struct bpfobj *o, const char *path, const uint64_t *offsets,
			     const uint64_t *cookies, size_t n, int pid)
{
	union {
		struct link_create_uprobe_multi lc;
		char pad[128];	/* the kernel wants trailing bytes zero */
	} attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.lc.prog_fd = bpf_program__fd(bpfobj__skel(o)->progs.profd_heap_session);
	attr.lc.attach_type = bpfobj__features(o)->uprobe_session_type;
	attr.lc.path = (uintptr_t)path;
	attr.lc.offsets = (uintptr_t)offsets;
	attr.lc.cookies = (uintptr_t)cookies;
	attr.lc.cnt = n;
	/* The kernel puts the breakpoints only in pid's memory (its
	 * filter); 0: every process mapping the file. */
	attr.lc.pid = pid > 0 ? pid : 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

struct bpf_link *heap_bpf__attach_uprobe(struct bpfobj *o, const char *path, uint64_t offset,
					 uint64_t cookie, bool ret, int pid)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie, .retprobe = ret);
	struct profd_bpf *skel = bpfobj__skel(o);

	return bpf_program__attach_uprobe_opts(ret ? skel->progs.profd_heap_return :
						     skel->progs.profd_heap_entry,
					       pid > 0 ? pid : -1, path, offset, &opts);
}

struct bpf_link *heap_bpf__attach_event(struct bpfobj *o, int pfd, uint64_t cookie, bool ret)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = cookie);
	struct profd_bpf *skel = bpfobj__skel(o);

	return bpf_program__attach_perf_event_opts(ret ? skel->progs.profd_heap_return :
							 skel->progs.profd_heap_entry,
						   pfd, &opts);
}

int heap_bpf__stack(struct bpfobj *o, int32_t stack_id, uint64_t *frames)
{
	__s32 id = stack_id;

	if (bpf_map_lookup_elem(bpf_map__fd(bpfobj__skel(o)->maps.heap_stacks), &id, frames))
		return -errno;
	return 0;
}

int heap_bpf__each_alloc(struct bpfobj *o, bpfobj_entry_fn fn, void *ctx)
{
	return bpfobj__map_each(bpf_map__fd(bpfobj__skel(o)->maps.heap_allocs),
				sizeof(struct profd_heap_site), sizeof(struct profd_heap_count), fn,
				ctx);
}

int heap_bpf__each_live(struct bpfobj *o, bpfobj_entry_fn fn, void *ctx)
{
	return bpfobj__map_each(bpf_map__fd(bpfobj__skel(o)->maps.heap_live),
				sizeof(struct profd_heap_ptr), sizeof(struct profd_heap_live), fn, ctx);
}

void heap_bpf__forget_live(struct bpfobj *o, const struct profd_heap_ptr *p)
{
	bpf_map_delete_elem(bpf_map__fd(bpfobj__skel(o)->maps.heap_live), p);
}

void heap_bpf__forget_site(struct bpfobj *o, const struct profd_heap_site *s)
{
	bpf_map_delete_elem(bpf_map__fd(bpfobj__skel(o)->maps.heap_allocs), s);
}
