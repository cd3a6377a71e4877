// SPDX-License-Identifier: BSD-2-Clause
/* cpurings: the per-CPU rings of small samples, read (the contract: cpurings.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/log.h"
#include "tracer/cpurings.h"

struct cpurings {
	struct profd_cpuring *rings;
	uint32_t n;
	uint32_t next;		/* the ring the next read starts with */
	size_t len;		/* the mapping's bytes; 0: not ours */
	uint64_t bad;
};

struct cpurings *cpurings__over(struct profd_cpuring *rings, uint32_t nrings)
{
	struct cpurings *cr = calloc(1, sizeof(*cr));

	if (!cr)
		return NULL;
	cr->rings = rings;
	cr->n = nrings;
	return cr;
}

struct cpurings *cpurings__map(int map_fd, uint32_t nrings)
{
	size_t len = (size_t)nrings * sizeof(struct profd_cpuring);
	struct cpurings *cr;
	void *p;
	int err;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED) {
		err = errno;
		log__error("cannot map the per-CPU sample rings (%zu bytes): %s", len,
			   strerror(err));
		errno = err;
		return NULL;
	}
	cr = cpurings__over(p, nrings);
	if (!cr) {
		munmap(p, len);
		errno = ENOMEM;
		return NULL;
	}
	cr->len = len;
	return cr;
}

void cpurings__free(struct cpurings *cr)
{
	if (!cr)
		return;
	if (cr->len)
		munmap(cr->rings, cr->len);
	free(cr);
}

uint64_t cpurings__bad(const struct cpurings *cr)
{
	return cr ? cr->bad : 0;
}

/* One ring: the records between tail and head.  The program publishes a
 * record by its add to head, after writing it: an acquire load of head
 * sees the record whole.  The tail is stored after each record is read,
 * with release, so the program never writes over one being read. */
static int consume_one(struct cpurings *cr, struct profd_cpuring *r, cpurings_fn fn, void *ctx)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->tail;
	int ret = 0;

	while (tail < head) {
		const struct profd_cpuring_rec *rec =
			(const void *)&r->data[tail & (PROFD_CPURING_BYTES - 1)];
		uint32_t len = rec->len;

		if (len < sizeof(*rec) + sizeof(struct profd_sample) || len > PROFD_CPURING_REC_MAX ||
		    len % 8 || len > head - tail || head - tail > PROFD_CPURING_BYTES) {
			cr->bad++;
			log__warn("a per-CPU sample ring holds a record of %u bytes with %llu "
				  "waiting: dropping what waits there",
				  len, (unsigned long long)(head - tail));
			tail = head;
			break;
		}
		ret = fn(ctx, (void *)(rec + 1), len - sizeof(*rec));
		tail += len;
		if (ret)
			break;
	}
	__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	return ret;
}

int cpurings__consume(struct cpurings *cr, cpurings_fn fn, void *ctx)
{
	for (uint32_t i = 0; i < cr->n; i++) {
		uint32_t at = (cr->next + i) % cr->n;
		int ret = consume_one(cr, &cr->rings[at], fn, ctx);

		if (ret) {
			/* The next read starts with the ring after it, so one
			 * busy CPU cannot keep the others' samples waiting. */
			cr->next = (at + 1) % cr->n;
			return ret;
		}
	}
	return 0;
}
