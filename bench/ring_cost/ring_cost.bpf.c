// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What one way of handing a sample to user space costs a perf_event
 * program, apart from everything else a sampler does (bench/ring_cost.sh):
 * the variant, chosen before load, writes the same `size` bytes (up to
 * 8 KiB; 256 for V_RB_RESERVE) from a per-CPU buffer each time.  Not part of profd.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

enum variant {
	V_EMPTY,	/* the program's invocation: the floor */
	V_SCRATCH,	/* + a per-CPU buffer looked up and touched */
	V_RB_OUTPUT,	/* + bpf_ringbuf_output, no wakeup */
	V_RB_QUERY,	/* + bpf_ringbuf_query first, as profd's wakeup check did */
	V_RB_RESERVE,	/* bpf_ringbuf_reserve / submit, the record written in place */
	V_PERF_OUTPUT,	/* bpf_perf_event_output to a perf buffer per CPU */
	V_CPU_RING,	/* a ring per CPU in a mapped array: a copy and a fetch-and-add */
	V_RB_BIG,	/* a 42 KiB reservation, size bytes written: a sample with a
			 * stack copy, as profd wrote it until 985c3da */
	V_CPU_BIG,	/* size bytes into the CPU ring, room kept for the largest */
	V_RB_BIG_WAKE,	/* V_RB_BIG, woken when a quarter full, as profd's was */
};

const volatile __u32 variant;
const volatile __u32 size = 256;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, 4);
	__uint(value_size, 4);
} pb SEC(".maps");

struct buf {
	__u8 d[8192];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct buf);
} scratch SEC(".maps");

#define RING (128 << 10)
struct cpu_ring {
	__u64 head;
	__u8 pad0[56];
	__u64 tail;
	__u8 pad1[56];
	__u8 data[RING + 45056];
};

/* max_entries: the possible CPUs, set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct cpu_ring);
} rings SEC(".maps");

SEC("perf_event")
int ring_cost(struct bpf_perf_event_data *ctx)
{
	__u32 zero = 0, cpu, n = size & 8191;
	struct cpu_ring *r;
	struct buf *b;
	void *p;

	if (variant == V_EMPTY)
		return 0;
	b = bpf_map_lookup_elem(&scratch, &zero);
	if (!b)
		return 0;
	b->d[0] = 1;
	switch (variant) {
	case V_RB_OUTPUT:
		bpf_ringbuf_output(&rb, b, n, BPF_RB_NO_WAKEUP);
		break;
	case V_RB_QUERY:
		bpf_ringbuf_output(&rb, b, n,
				   bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) > (256 << 10) ?
					   BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
		break;
	case V_RB_RESERVE:
		p = bpf_ringbuf_reserve(&rb, 256, 0);
		if (!p)
			break;
		bpf_probe_read_kernel(p, 256, b);
		bpf_ringbuf_submit(p, BPF_RB_NO_WAKEUP);
		break;
	case V_RB_BIG:
	case V_RB_BIG_WAKE:
		p = bpf_ringbuf_reserve(&rb, 43008, 0);
		if (!p)
			break;
		bpf_probe_read_kernel(p, n, b);
		*(__u32 *)p = n;
		bpf_ringbuf_submit(p, variant == V_RB_BIG_WAKE &&
						  bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) > (256 << 10) ?
					      BPF_RB_FORCE_WAKEUP :
					      BPF_RB_NO_WAKEUP);
		break;
	case V_PERF_OUTPUT:
		bpf_perf_event_output(ctx, &pb, BPF_F_CURRENT_CPU, b, n);
		break;
	case V_CPU_RING:
	case V_CPU_BIG:
		cpu = bpf_get_smp_processor_id();
		r = bpf_map_lookup_elem(&rings, &cpu);
		if (!r)
			break;
		/* V_CPU_BIG keeps room for profd's largest record, as profd does */
		if (variant == V_CPU_BIG && r->head - *(volatile __u64 *)&r->tail > RING - 43008)
			break;
		bpf_probe_read_kernel(&r->data[r->head & (RING - 1)], n, b);
		if (__sync_fetch_and_add(&r->head, (n + 7) & ~7u) == ~0ull)
			r->tail = 0;	/* never: keeps the fetch, and its barrier */
		break;
	}
	return 0;
}
