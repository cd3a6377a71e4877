/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Heap tracking: one uprobe.session program on every allocator entry point
 * (cookie = which function, and where its return address is).
 *
 * Cost is what matters: a malloc+free pair costs ~11 ns, a uprobe trap
 * ~0.5 us when the kernel emulates the probed instruction and ~17 us when
 * it must single-step it.  So:
 *  - the daemon places each probe on an emulated instruction (see
 *    daemon/uprobe_place.c);
 *  - an unsampled allocation only decrements a per-CPU byte counter: the
 *    Poisson process is memoryless, so other processes' allocations sharing
 *    the counter don't bias which of the targets' allocations get sampled;
 *  - only a sampled allocation asks for the return probe (a session entry
 *    returning 0), to learn the pointer; everything else returns 1, and
 *    the kernel sets up no return trampoline for that call;
 *  - free() is one hash delete of (tgid, ptr), which misses unless the
 *    pointer was sampled.
 * Included by profile.bpf.c: it shares the process table and filters.
 */

/* Mean bytes between samples; 0 = heap tracking off. */
volatile __u64 heap_sample_bytes;
/* -ln((i + 0.5) / PROFD_EXP_TABLE) in 16.16 fixed point, filled by the daemon. */
const volatile __u32 exp_table[PROFD_EXP_TABLE];
/* Heap tracking of the whole system (no --pid/--exe). */
volatile __u32 heap_all;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);	/* bytes until the next sample */
} heap_countdown SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFD_HSTAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} heap_stats SEC(".maps");

/* Sampled allocations still live.  max_entries is set by the daemon. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct profd_heap_ptr);
	__type(value, struct profd_heap_live);
} heap_live SEC(".maps");

/* Every sampled allocation since tracking began, by site. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct profd_heap_site);
	__type(value, struct profd_heap_count);
} heap_allocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 8192);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFD_HEAP_STACK_DEPTH * sizeof(__u64));
} heap_stacks SEC(".maps");

/* A sampled call between its entry and its return, by thread. */
struct heap_pending {
	__u64 size;
	__u64 memptr;		/* posix_memalign's void ** */
	struct profd_heap_site site;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct heap_pending);
} heap_pending SEC(".maps");

extern bool bpf_session_is_return(void) __ksym;

static __always_inline void heap_stat(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&heap_stats, &stat);

	if (v)
		(*v)++;
}

static __always_inline void heap_forget(__u32 tgid, __u64 ptr)
{
	struct profd_heap_ptr key = {.tgid = tgid, .ptr = ptr};

	if (ptr && bpf_map_delete_elem(&heap_live, &key) == 0)
		heap_stat(PROFD_HSTAT_FREED);
}

/* Count size bytes down; true when this allocation is sampled. */
static __always_inline bool heap_sample(__u64 size)
{
	__u32 zero = 0;
	__s64 *left = bpf_map_lookup_elem(&heap_countdown, &zero);
	__u64 mean = heap_sample_bytes;
	__u32 r;

	if (!left || !mean)
		return false;
	*left -= size;
	if (*left > 0)
		return false;
	r = bpf_get_prandom_u32() % PROFD_EXP_TABLE;
	*left = (__s64)((exp_table[r] * mean) >> 16) + 1;
	return true;
}

static __always_inline int heap_entry(struct pt_regs *ctx, __u64 cookie)
{
	__u32 fn = cookie & 0xff, delta = (cookie >> 8) & 0xffff;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct heap_pending pend = {};
	struct task_struct *task;
	struct profd_proc *p;
	__u64 size;

	switch (fn) {
	case PROFD_FN_FREE:
		heap_forget(tgid, PT_REGS_PARM1(ctx));
		return 1;
	case PROFD_FN_REALLOC:
		heap_forget(tgid, PT_REGS_PARM1(ctx));
		size = PT_REGS_PARM2(ctx);
		break;
	case PROFD_FN_REALLOCARRAY:
		heap_forget(tgid, PT_REGS_PARM1(ctx));
		size = PT_REGS_PARM2(ctx) * PT_REGS_PARM3(ctx);
		break;
	case PROFD_FN_CALLOC:
		size = PT_REGS_PARM1(ctx) * PT_REGS_PARM2(ctx);
		break;
	case PROFD_FN_POSIX_MEMALIGN:
		pend.memptr = PT_REGS_PARM1(ctx);
		size = PT_REGS_PARM3(ctx);
		break;
	case PROFD_FN_ALIGNED_ALLOC:
	case PROFD_FN_MEMALIGN:
		size = PT_REGS_PARM2(ctx);
		break;
	default:	/* malloc, valloc, pvalloc */
		size = PT_REGS_PARM1(ctx);
		break;
	}
	if (!heap_sample(size))
		return 1;
	/* Only now is it worth asking whether this process is a target. */
	p = current_proc(tgid);
	if (!p || !(heap_all || ((p->pid_mask | p->exe_mask) & PROFD_HEAP_BIT)))
		return 1;

	pend.size = size;
	pend.site.tgid = tgid;
	pend.site.fn = fn;
	task = (struct task_struct *)bpf_get_current_task_btf();
	BPF_CORE_READ_INTO(&pend.site.comm, task, group_leader, comm);
	/* The probe sits at (or just after) the allocator's entry, before it
	 * has a frame: the frame-pointer walk starts at its caller's caller,
	 * and the caller itself is the return address on the stack. */
	bpf_probe_read_user(&pend.site.callsite, sizeof(pend.site.callsite),
			    (void *)(PT_REGS_SP(ctx) + delta));
	pend.site.stack_id = bpf_get_stackid(ctx, &heap_stacks, BPF_F_USER_STACK);
	if (pend.site.stack_id < 0)
		heap_stat(PROFD_HSTAT_STACK_ERR);
	if (bpf_map_update_elem(&heap_pending, &tid, &pend, BPF_ANY))
		return 1;
	heap_stat(PROFD_HSTAT_SAMPLED);
	return 0;	/* run the return probe for this call */
}

static __always_inline int heap_return(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct heap_pending *pend = bpf_map_lookup_elem(&heap_pending, &tid);
	struct profd_heap_count *c, one = {1, 0};
	struct profd_heap_live live = {};
	struct profd_heap_ptr key = {};
	__u64 ptr = PT_REGS_RC(ctx);

	if (!pend)
		return 0;
	if (pend->site.fn == PROFD_FN_POSIX_MEMALIGN) {
		__u64 out = 0;

		if (ptr == 0)	/* it returns 0 on success */
			bpf_probe_read_user(&out, sizeof(out), (void *)pend->memptr);
		ptr = out;
	}
	if (ptr) {
		key.tgid = pend->site.tgid;
		key.ptr = ptr;
		live.size = pend->size;
		live.site = pend->site;
		if (bpf_map_update_elem(&heap_live, &key, &live, BPF_ANY))
			heap_stat(PROFD_HSTAT_LIVE_FULL);
		c = bpf_map_lookup_elem(&heap_allocs, &pend->site);
		if (!c) {
			one.bytes = pend->size;
			if (bpf_map_update_elem(&heap_allocs, &pend->site, &one, BPF_NOEXIST) == 0)
				goto out;
			/* Lost a race with another CPU, or the map is full. */
			c = bpf_map_lookup_elem(&heap_allocs, &pend->site);
			if (!c) {
				heap_stat(PROFD_HSTAT_ALLOCS_FULL);
				goto out;
			}
		}
		__sync_fetch_and_add(&c->count, 1);
		__sync_fetch_and_add(&c->bytes, pend->size);
	}
out:
	bpf_map_delete_elem(&heap_pending, &tid);
	return 0;
}

/* Attached by the daemon as a uprobe.session (see heap.c). */
SEC("uprobe")
int profd_heap(struct pt_regs *ctx)
{
	if (bpf_session_is_return())
		return heap_return(ctx);
	return heap_entry(ctx, bpf_get_attach_cookie(ctx));
}
