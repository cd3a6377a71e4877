// SPDX-License-Identifier: BSD-2-Clause
/*
 * libprofd_heap.so: sampled heap tracking inside the process, for profd.
 *
 * Preloaded (LD_PRELOAD, set where postgres is started), it wraps the
 * allocator and decides in the process, with a per-thread byte countdown
 * (the Poisson sampling jemalloc and Go's runtime use), which allocations
 * are sampled: one in every PROFD_HEAP_SAMPLE_BYTES bytes on average
 * (default 524288, profd's own default; the two must agree, and profd
 * drops samples made at another mean).  Only a sampled allocation, and the
 * free of a sampled block, call the two functions below, on which profd
 * puts its probes: an unsampled malloc+free pair costs a few nanoseconds
 * more than the allocator's, and never traps into the kernel.  Without
 * profd running nothing traps at all.
 *
 * Which frees to report: the sampled blocks' addresses are kept in a
 * fixed, lock-free table (512 KiB).  A free first reads one counter of a
 * 16 KiB array, the live sampled blocks whose hash falls there, and looks
 * in the table only when it is not zero: most frees touch nothing colder
 * than that array, and never the table's tombstones, which build up as a
 * long-lived process samples.  A sample that finds no free slot is not
 * reported, so a block profd knows of is always one whose free it hears of.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define SLOTS (1u << 16)	/* sampled blocks live at once, at most */
#define PROBES 16		/* slots looked at per insert or lookup */
#define TOMBSTONE ((uintptr_t)1)
#define BUCKETS (1u << 12)	/* counters in front of the table */

/* enum profd_alloc_fn of profd's bpf/abi/heap.h: what each sample says it was. */
enum { FN_MALLOC = 1, FN_CALLOC, FN_REALLOC, FN_REALLOCARRAY, FN_POSIX_MEMALIGN,
       FN_ALIGNED_ALLOC, FN_MEMALIGN, FN_VALLOC, FN_PVALLOC };

/*
 * profd's probes go on these two.  noinline and an empty asm keep each a
 * real call with its arguments in registers; profd reads them from there.
 * sampled: ptr was allocated with size bytes by fn, called from callsite,
 * sampled at mean bytes.  freed: a sampled ptr is being freed.
 */
EXPORT __attribute__((noinline)) void profd_heap_sampled(void *ptr, size_t size, int fn,
							  void *callsite, size_t mean)
{
	/* A nop first: the kernel emulates it, where a ret is single-stepped. */
	__asm__ volatile("nop" : : "r"(ptr), "r"(size), "r"(fn), "r"(callsite), "r"(mean) : "memory");
}

EXPORT __attribute__((noinline)) void profd_heap_freed(void *ptr)
{
	__asm__ volatile("nop" : : "r"(ptr) : "memory");
}

/*
 * glibc's allocator, by the names it exports for this (GLIBC_2.2.5, in
 * libc.so.6 on every glibc): no dlsym, whose version moved to libc in 2.34
 * (a library built on bookworm asking for it would not load on bullseye's
 * 2.31), and no allocation before the wrapper is usable.  A program with
 * an allocator of its own (jemalloc linked in) is not for this library:
 * its calls would go to glibc's.
 */
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

static uint64_t mean = 524288;
static uintptr_t table[SLOTS];
/* Live sampled blocks by the hash's top 12 bits: raised before a block is
 * in the table, lowered after it left, so a free of a block in the table
 * never reads 0 (its malloc returned after the raise, and the program
 * ordered its free after that). */
static uint32_t live[BUCKETS];

static __thread int64_t countdown __attribute__((tls_model("initial-exec")));
static __thread uint64_t rng __attribute__((tls_model("initial-exec")));

__attribute__((constructor)) static void configure(void)
{
	const char *env = getenv("PROFD_HEAP_SAMPLE_BYTES");

	if (env) {
		char *end;
		unsigned long long v = strtoull(env, &end, 10);

		/* Out of profd's range (1 .. 1 GiB), or not a number: the default. */
		if (!*end && v >= 1 && v <= (1ull << 30))
			mean = v;
	}
}

/* -ln(u) for u in (0, 1), to ~1e-6, without libm (whose log moved to a new
 * version in glibc 2.29): the exponent, and ln of the mantissa by its
 * atanh series. */
static double neg_ln(double u)
{
	union {
		double d;
		uint64_t i;
	} x = {u};
	int e = (int)((x.i >> 52) & 0x7ff) - 1023;
	double m, t, t2;

	x.i = (x.i & 0xfffffffffffffull) | 0x3ff0000000000000ull;
	m = x.d;
	t = (m - 1) / (m + 1);
	t2 = t * t;
	return -(e * 0.6931471805599453 +
		 2 * t * (1 + t2 * (1.0 / 3 + t2 * (1.0 / 5 + t2 * (1.0 / 7 + t2 / 9)))));
}

/* Bytes to the next sample: exponential with the mean, per thread. */
static int64_t next_gap(void)
{
	double u;

	if (!rng)
		rng = ((uint64_t)(uintptr_t)&rng * 0x9e3779b97f4a7c15ull) ^
		      (uint64_t)syscall(SYS_gettid) ^ 1;
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	u = ((rng >> 11) + 0.5) / 9007199254740992.0;	/* (0, 1) */
	return (int64_t)(neg_ln(u) * (double)mean) + 1;
}

static uint32_t slot_of(uintptr_t p)
{
	return (uint32_t)(((uint64_t)p * 0x9e3779b97f4a7c15ull) >> 48) & (SLOTS - 1);
}

static uint32_t *bucket_of(uintptr_t p)
{
	return &live[(uint32_t)(((uint64_t)p * 0x9e3779b97f4a7c15ull) >> 52) & (BUCKETS - 1)];
}

static int remember(uintptr_t p)
{
	uint32_t s = slot_of(p), *b = bucket_of(p);

	__atomic_fetch_add(b, 1, __ATOMIC_ACQ_REL);
	for (int i = 0; i < PROBES; i++, s = (s + 1) & (SLOTS - 1)) {
		uintptr_t old = __atomic_load_n(&table[s], __ATOMIC_RELAXED);

		if ((old == 0 || old == TOMBSTONE) &&
		    __atomic_compare_exchange_n(&table[s], &old, p, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return 1;
	}
	__atomic_fetch_sub(b, 1, __ATOMIC_ACQ_REL);
	return 0;
}

/* Was p sampled?  Then it is forgotten, and true. */
static int forget(uintptr_t p)
{
	uint32_t s = slot_of(p), *b = bucket_of(p);

	if (!__atomic_load_n(b, __ATOMIC_RELAXED))
		return 0;
	for (int i = 0; i < PROBES; i++, s = (s + 1) & (SLOTS - 1)) {
		uintptr_t v = __atomic_load_n(&table[s], __ATOMIC_RELAXED);

		if (v == 0)
			return 0;
		if (v == p) {
			if (!__atomic_compare_exchange_n(&table[s], &v, TOMBSTONE, 0,
							 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				return 0;
			__atomic_fetch_sub(b, 1, __ATOMIC_ACQ_REL);
			return 1;
		}
	}
	return 0;
}

/* After an allocation of size bytes returned p: sample it? */
static inline void account(void *p, size_t size, int fn, void *callsite)
{
	if (!p || !size)
		return;
	countdown -= (int64_t)size;
	if (countdown > 0)
		return;
	countdown = next_gap();
	if (remember((uintptr_t)p))
		profd_heap_sampled(p, size, fn, callsite, mean);
}

static inline void release(void *p)
{
	if (p && forget((uintptr_t)p))
		profd_heap_freed(p);
}

EXPORT void *malloc(size_t size)
{
	void *p = __libc_malloc(size);

	account(p, size, FN_MALLOC, __builtin_return_address(0));
	return p;
}

EXPORT void free(void *p)
{
	release(p);
	__libc_free(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
	void *p = __libc_calloc(n, size);

	if (!size || n <= SIZE_MAX / size)
		account(p, n * size, FN_CALLOC, __builtin_return_address(0));
	return p;
}

EXPORT void *realloc(void *old, size_t size)
{
	void *p;

	/* Forgotten before the call: once it returns, another thread may be
	 * given the same address. */
	if (old && size && forget((uintptr_t)old)) {
		p = __libc_realloc(old, size);
		if (!p) {
			/* Failed: the old block stays, sampled as it was. */
			remember((uintptr_t)old);
			return p;
		}
		profd_heap_freed(old);
	} else {
		if (old && !size)
			release(old);
		p = __libc_realloc(old, size);
	}
	account(p, size, FN_REALLOC, __builtin_return_address(0));
	return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	/* posix_memalign's own rules, which __libc_memalign does not check. */
	if (align % sizeof(void *) || (align & (align - 1)) || !align)
		return EINVAL;
	p = __libc_memalign(align, size);
	if (!p && size)
		return ENOMEM;
	*out = p;
	account(p, size, FN_POSIX_MEMALIGN, __builtin_return_address(0));
	return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	void *p = __libc_memalign(align, size);

	account(p, size, FN_ALIGNED_ALLOC, __builtin_return_address(0));
	return p;
}

EXPORT void *memalign(size_t align, size_t size)
{
	void *p = __libc_memalign(align, size);

	account(p, size, FN_MEMALIGN, __builtin_return_address(0));
	return p;
}

EXPORT void *valloc(size_t size)
{
	void *p = __libc_valloc(size);

	account(p, size, FN_VALLOC, __builtin_return_address(0));
	return p;
}

EXPORT void *pvalloc(size_t size)
{
	void *p = __libc_pvalloc(size);

	account(p, size, FN_PVALLOC, __builtin_return_address(0));
	return p;
}
