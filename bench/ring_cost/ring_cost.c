// SPDX-License-Identifier: BSD-2-Clause
/*
 * Loads ring_cost.bpf.o with one variant, attaches it to a cpu-clock event
 * per CPU at FREQ Hz, reads what user space would (so the rings do not
 * fill, polled every 5 ms, as a 43 KiB record fills the 1 MiB ring in
 * ~12 ms at 999 Hz on 2 CPUs), and prints "VARIANT ns_per_run runs" from kernel.bpf_stats over
 * SECS seconds after a second's warm-up.  bench/ring_cost.sh runs it.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ring_cost.skel.h"

/* The reader reads what it is handed, as the daemon does: the lines
 * written go to its CPU and back. */
static volatile unsigned long sink;

static int on_rb(void *ctx, void *data, size_t size)
{
	unsigned int n = *(unsigned int *)data;
	unsigned long x = 0;

	if (n > size)
		n = 0;
	for (unsigned int i = 0; i < n; i += 8)
		x += *(unsigned long *)((char *)data + i);
	sink += x;
	return 0;
}

static void on_pb(void *ctx, int cpu, void *data, __u32 size)
{
}

int main(int argc, char **argv)
{
	struct bpf_prog_info a = {}, b = {};
	struct ring_buffer *rb = NULL;
	struct perf_buffer *pb = NULL;
	struct ring_cost_bpf *skel;
	__u32 len = sizeof(a);
	int ncpu, freq, secs, fd;
	__u64 *rings = NULL;
	size_t rings_len;

	if (argc != 4) {
		fprintf(stderr, "usage: %s VARIANT FREQ SECS\n", argv[0]);
		return 2;
	}
	freq = atoi(argv[2]);
	secs = atoi(argv[3]);
	ncpu = libbpf_num_possible_cpus();
	skel = ring_cost_bpf__open();
	if (!skel || ncpu <= 0)
		return 1;
	skel->rodata->variant = atoi(argv[1]);
	if (getenv("SIZE"))
		skel->rodata->size = atoi(getenv("SIZE"));
	bpf_map__set_max_entries(skel->maps.rings, ncpu);
	if (ring_cost_bpf__load(skel)) {
		fprintf(stderr, "load failed\n");
		return 1;
	}
	rings_len = (size_t)ncpu * bpf_map__value_size(skel->maps.rings);
	rings_len = (rings_len + 4095) & ~(size_t)4095;
	rings = mmap(NULL, rings_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     bpf_map__fd(skel->maps.rings), 0);
	rb = ring_buffer__new(bpf_map__fd(skel->maps.rb), on_rb, NULL, NULL);
	pb = perf_buffer__new(bpf_map__fd(skel->maps.pb), 64, on_pb, NULL, NULL, NULL);
	if (rings == MAP_FAILED || !rb || !pb)
		return 1;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.size = sizeof(attr),
			.freq = 1,
			.sample_freq = freq,
		};

		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, 0);
		if (fd >= 0 && !bpf_program__attach_perf_event(skel->progs.ring_cost, fd))
			return 1;
	}
	fd = bpf_program__fd(skel->progs.ring_cost);
	sleep(1);
	bpf_obj_get_info_by_fd(fd, &a, &len);
	for (int t = 0; t < secs * 200; t++) {
		usleep(5000);
		ring_buffer__consume(rb);
		perf_buffer__consume(pb);
		/* The reader's side of the per-CPU rings: tail = head. */
		for (int cpu = 0; cpu < ncpu; cpu++) {
			__u64 *r = (__u64 *)((char *)rings +
					     (size_t)cpu * bpf_map__value_size(skel->maps.rings));

			__u64 h = __atomic_load_n(&r[0], __ATOMIC_ACQUIRE), x = 0;
			unsigned char *d = (unsigned char *)r + 128;

			for (__u64 t = r[8]; t < h; t += 8)
				x += *(__u64 *)(d + (t & ((128 << 10) - 1)));
			sink += x;
			__atomic_store_n(&r[8], h, __ATOMIC_RELEASE);
		}
	}
	len = sizeof(b);
	bpf_obj_get_info_by_fd(fd, &b, &len);
	printf("%s %.0f %llu\n", argv[1],
	       (double)(b.run_time_ns - a.run_time_ns) / (double)(b.run_cnt - a.run_cnt ?: 1),
	       (unsigned long long)(b.run_cnt - a.run_cnt));
	return 0;
}
