// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Heap tracking: probes on every allocator entry point (cookie = which
 * function, and where its return address is), sampled in the kernel by
 * bytes.
 *
 * Cost is what matters: a malloc+free pair costs ~11 ns, a uprobe trap
 * ~0.5-1 us when the kernel emulates the probed instruction and much more
 * when it must single-step it.  So:
 *  - the daemon places each probe on an emulated instruction (see
 *    heap/uprobe_place.c);
 *  - an unsampled allocation only decrements a per-CPU byte counter: the
 *    Poisson process is memoryless, so other processes' allocations sharing
 *    the counter don't bias which of the targets' allocations get sampled;
 *  - on kernels with uprobe sessions (6.12+ with BTF), only a sampled call
 *    (or a realloc of a sampled pointer) gets a return probe: the session
 *    entry returns 0 to ask for it and 1 to skip it.  Elsewhere a plain
 *    uretprobe fires on every return and finds nothing pending;
 *  - free() is one hash delete of (tgid, ptr), which misses unless the
 *    pointer was sampled.
 *
 * Entry and return are told apart without the bpf_session_is_return()
 * kfunc, which needs BTF and a JIT: a call in flight is keyed by thread and
 * the stack pointer it will return with, and only its return arrives at
 * that stack pointer and at its call site.
 */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/abi/heap.h"
#include "bpf/arch/arch.bpf.h"
#include "bpf/targets.bpf.h"

/* Mean bytes between samples; 0 = heap tracking off. */
volatile __u64 heap_sample_bytes;
/* -ln((i + 0.5) / PROFD_EXP_TABLE) in 16.16 fixed point, filled by the daemon. */
const volatile __u32 exp_table[PROFD_EXP_TABLE];
/* Heap tracking of the whole system (no --pid/--exe). */
volatile __u32 heap_all;
/* Heap tracking has executable targets. */
volatile __u32 heap_by_exe;

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

/* A call in flight: the thread, and the stack pointer it returns with.
 * Nested calls (an allocation in a signal handler) have their own. */
struct heap_call_key {
	__u32 tid;
	__u32 pad;
	__u64 ret_sp;
};

struct heap_call {
	__u64 ret_ip;		/* the call site it returns to */
	__u64 size;
	__u64 memptr;		/* posix_memalign's void ** */
	__u64 old_ptr;		/* realloc's pointer, freed only if the call succeeds */
	__u32 sampled;
	__u32 pad;
	struct profd_heap_site site;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct heap_call_key);
	__type(value, struct heap_call);
} heap_calls SEC(".maps");

/* Too big for the 512-byte stack next to everything else. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct heap_call);
} heap_call_scratch SEC(".maps");

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

static __always_inline bool heap_tracked(__u32 tgid, __u64 ptr)
{
	struct profd_heap_ptr key = {.tgid = tgid, .ptr = ptr};

	return ptr && bpf_map_lookup_elem(&heap_live, &key);
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

/* a * b, or 0 when it overflows: such a call fails, and allocates nothing. */
static __always_inline __u64 mul_size(__u64 a, __u64 b)
{
	__u64 q;

	if (!((a | b) >> 32) || !b)
		return a * b;
	q = ~0ULL / b;
	/* Keep clang from turning this into a 128-bit multiply BPF lacks. */
	asm volatile("" : "+r"(q));
	return a > q ? 0 : a * b;
}

/* A sampled allocation's bookkeeping: live, and counted at its site. */
static __always_inline void heap_record(const struct profd_heap_site *site, __u64 ptr, __u64 size)
{
	struct profd_heap_count *cnt, one = {1, 0};
	struct profd_heap_live live = {};
	struct profd_heap_ptr pk = {};

	pk.tgid = site->tgid;
	pk.ptr = ptr;
	live.size = size;
	live.site = *site;
	if (bpf_map_update_elem(&heap_live, &pk, &live, BPF_ANY))
		heap_stat(PROFD_HSTAT_LIVE_FULL);
	cnt = bpf_map_lookup_elem(&heap_allocs, site);
	if (!cnt) {
		one.bytes = size;
		if (bpf_map_update_elem(&heap_allocs, site, &one, BPF_NOEXIST) == 0)
			return;
		/* Lost a race with another CPU, or the map is full. */
		cnt = bpf_map_lookup_elem(&heap_allocs, site);
		if (!cnt) {
			heap_stat(PROFD_HSTAT_ALLOCS_FULL);
			return;
		}
	}
	__sync_fetch_and_add(&cnt->count, 1);
	__sync_fetch_and_add(&cnt->bytes, size);
}

/*
 * libprofd_heap.so sampled an allocation in the process (ptr, size, fn,
 * callsite, mean): recorded as it says, once its mean is ours.  What a
 * process says of itself can only be wrong about itself: a garbage call
 * records a block of its own process at most.
 */
static __always_inline int heap_preload(struct pt_regs *ctx, __u32 tgid)
{
	__u64 ptr = PT_REGS_PARM1(ctx), size = PT_REGS_PARM2(ctx);
	__u32 fn = (__u32)PT_REGS_PARM3(ctx), zero = 0;
	enum target_verdict v;
	struct heap_call *c;

	if (!ptr || !size || size > (1ULL << 48))
		return 1;
	if (PT_REGS_PARM5(ctx) != heap_sample_bytes) {
		heap_stat(PROFD_HSTAT_PRELOAD_MEAN);
		return 1;
	}
	if (!heap_all) {
		v = target_check(tgid, PROFD_HEAP_BIT, heap_by_exe);
		if (v == TARGET_MAYBE)
			proc_note(tgid, true);
		if (v == TARGET_NO)
			return 1;
	}
	c = bpf_map_lookup_elem(&heap_call_scratch, &zero);
	if (!c)
		return 1;
	__builtin_memset(c, 0, sizeof(*c));
	c->site.tgid = tgid;
	c->site.fn = fn >= PROFD_FN_MALLOC && fn < PROFD_FN_FREE ? fn : PROFD_FN_MALLOC;
	c->site.callsite = PT_REGS_PARM4(ctx);
	bpf_get_current_comm(c->site.comm, sizeof(c->site.comm));
	c->site.stack_id = bpf_get_stackid(ctx, &heap_stacks, BPF_F_USER_STACK);
	if (c->site.stack_id < 0)
		heap_stat(PROFD_HSTAT_STACK_ERR);
	heap_stat(PROFD_HSTAT_SAMPLED);
	heap_record(&c->site, ptr, size);
	return 1;
}

/* Returns 0 when the call's return must be seen, 1 when not. */
static __always_inline int heap_entry(struct pt_regs *ctx, __u64 cookie)
{
	__u32 fn = cookie & 0xff, delta = (cookie >> 8) & 0xffff, zero = 0;
	__u64 id = bpf_get_current_pid_tgid(), size, old = 0, memptr = 0;
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct heap_call_key key = {.tid = tid};
	enum target_verdict v;
	struct heap_call *c;
	bool sampled, keep_old;

	heap_stat(PROFD_HSTAT_CALLS);
	switch (fn) {
	case PROFD_FN_FREE:
	case PROFD_FN_PRELOAD_FREED:
		heap_forget(tgid, PT_REGS_PARM1(ctx));
		return 1;
	case PROFD_FN_PRELOAD_SAMPLED:
		return heap_preload(ctx, tgid);
	case PROFD_FN_REALLOC:
		old = PT_REGS_PARM1(ctx);
		size = PT_REGS_PARM2(ctx);
		break;
	case PROFD_FN_REALLOCARRAY:
		old = PT_REGS_PARM1(ctx);
		size = mul_size(PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx));
		/* It fails, and the old block stays: not realloc(p, 0), which frees. */
		if (!size && PT_REGS_PARM2(ctx) && PT_REGS_PARM3(ctx))
			return 1;
		break;
	case PROFD_FN_CALLOC:
		size = mul_size(PT_REGS_PARM1(ctx), PT_REGS_PARM2(ctx));
		break;
	case PROFD_FN_POSIX_MEMALIGN:
		memptr = PT_REGS_PARM1(ctx);
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
	sampled = size && heap_sample(size);
	if (sampled && !heap_all) {
		/* Only now is it worth asking whether this process is a target. */
		v = target_check(tgid, PROFD_HEAP_BIT, heap_by_exe);
		if (v == TARGET_MAYBE)	/* kept: the daemon drops it if it isn't */
			proc_note(tgid, true);
		sampled = v != TARGET_NO;
	}
	/* realloc of a sampled pointer: it is freed only if the call succeeds. */
	keep_old = heap_tracked(tgid, old);
	if (!sampled && !keep_old)
		return 1;

	c = bpf_map_lookup_elem(&heap_call_scratch, &zero);
	if (!c)
		return 1;
	__builtin_memset(c, 0, sizeof(*c));
	/* The probe sits at (or just after) the allocator's entry, before it
	 * has a frame: the return address is where the call left it. */
	if (arch__call_return(ctx, delta, &c->ret_ip, &key.ret_sp))
		return 1;
	c->size = size;
	c->memptr = memptr;
	c->old_ptr = keep_old ? old : 0;
	c->sampled = sampled;
	if (sampled) {
		c->site.tgid = tgid;
		c->site.fn = fn;
		c->site.callsite = c->ret_ip;
		bpf_get_current_comm(c->site.comm, sizeof(c->site.comm));
		/* The frame-pointer walk starts at the caller's caller: the
		 * caller itself is the call site. */
		c->site.stack_id = bpf_get_stackid(ctx, &heap_stacks, BPF_F_USER_STACK);
		if (c->site.stack_id < 0)
			heap_stat(PROFD_HSTAT_STACK_ERR);
	}
	if (bpf_map_update_elem(&heap_calls, &key, c, BPF_ANY)) {
		heap_stat(PROFD_HSTAT_PENDING_FULL);
		heap_forget(tgid, c->old_ptr);	/* the old behaviour: forget it now */
		return 1;
	}
	if (sampled)
		heap_stat(PROFD_HSTAT_SAMPLED);
	return 0;
}

/* The return of a call heap_entry() kept, if this is one; true if it was. */
static __always_inline bool heap_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct heap_call_key key = {.tid = (__u32)id, .ret_sp = PT_REGS_SP(ctx)};
	struct heap_call *c = bpf_map_lookup_elem(&heap_calls, &key);
	__u64 ptr = PT_REGS_RC(ctx);

	if (!c || c->ret_ip != PT_REGS_IP(ctx))
		return false;
	if (c->site.fn == PROFD_FN_POSIX_MEMALIGN && c->sampled) {
		__u64 out = 0;

		if (ptr == 0)	/* it returns 0 on success */
			bpf_probe_read_user(&out, sizeof(out), (void *)c->memptr);
		ptr = out;
	}
	/* realloc(p, n) freed p if it returned a pointer, or if n was 0. */
	if (c->old_ptr && (ptr || !c->size))
		heap_forget(id >> 32, c->old_ptr);
	if (c->sampled && ptr)
		heap_record(&c->site, ptr, c->size);
	bpf_map_delete_elem(&heap_calls, &key);
	return true;
}

/* Attached as a uprobe session (Linux 6.12+): one program, entry and return. */
SEC("uprobe")
int profd_heap_session(struct pt_regs *ctx)
{
	if (heap_return(ctx))
		return 0;
	return heap_entry(ctx, bpf_get_attach_cookie(ctx));
}

/* Kernels without sessions: a uprobe on each entry... */
SEC("uprobe")
int profd_heap_entry(struct pt_regs *ctx)
{
	heap_entry(ctx, bpf_get_attach_cookie(ctx));
	return 0;
}

/* ...and a uretprobe on each allocating function. */
SEC("uretprobe")
int profd_heap_return(struct pt_regs *ctx)
{
	heap_return(ctx);
	return 0;
}
