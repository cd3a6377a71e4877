// SPDX-License-Identifier: BSD-2-Clause
/* Heap profiles: the estimate of true totals, and the site table. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "heap/heapsites.h"

/* Go's scaleHeapSample, computed independently of the code under test. */
static void expect(uint64_t count, uint64_t bytes, uint64_t rate, int64_t want_count,
		   int64_t want_bytes)
{
	int64_t c, b;

	heap_sites__unsample(count, bytes, rate, &c, &b);
	cr_assert_eq(c, want_count, "count %lu bytes %lu rate %lu: %ld, want %ld",
		     (unsigned long)count, (unsigned long)bytes, (unsigned long)rate, (long)c,
		     (long)want_count);
	cr_assert_eq(b, want_bytes, "bytes: %ld, want %ld", (long)b, (long)want_bytes);
}

Test(heapsites, unsample_like_go)
{
	/* 10 sampled 64-byte allocations at 512 KiB: each had a 1 - e^-(64/524288)
	 * chance, so they stand for about 81921 allocations. */
	double scale = 1.0 / (1.0 - exp(-64.0 / 524288));

	expect(10, 640, 524288, (int64_t)(10 * scale), (int64_t)(640 * scale));
	/* An allocation far above the rate is sampled almost surely: no scaling. */
	expect(1, 64ull << 20, 524288, 1, 64ll << 20);
	/* Every byte sampled. */
	expect(3, 300, 1, 3, 300);
	expect(0, 0, 524288, 0, 0);
}

Test(heapsites, sites_merge_by_whole_key)
{
	struct heap_sites t = {};
	struct profd_heap_site s = {.tgid = 42, .stack_id = 7, .callsite = 0x1234,
				    .fn = PROFD_FN_MALLOC};
	struct heap_site_agg *a, *b;

	memcpy(s.comm, "postgres", 9);
	a = heap_sites__get(&t, &s, 0);
	a->alloc_count++;
	b = heap_sites__get(&t, &s, 0);
	cr_assert_eq(a, b);
	cr_assert_eq(b->alloc_count, 1);
	s.fn = PROFD_FN_CALLOC;
	cr_assert_neq(heap_sites__get(&t, &s, 0), heap_sites__get(&t, &(struct profd_heap_site){}, 0));
	cr_assert_eq(t.n, 3);
	cr_assert_str_eq(heap_sites__fn_name(PROFD_FN_POSIX_MEMALIGN), "posix_memalign");
	cr_assert_str_eq(heap_sites__fn_name(999), "alloc");
	heap_sites__free(&t);
}
