// SPDX-License-Identifier: BSD-2-Clause
/* The per-CPU rings of small samples, read as cpu.bpf.c writes them: a
 * record whole at head % size, into the slack past the end if it must,
 * then head advanced by its length. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tracer/cpurings.h"
#include "bpf/abi/targets.h"

static struct profd_cpuring *rings;

static void setup(void)
{
	rings = calloc(2, sizeof(*rings));
	cr_assert_not_null(rings);
}

static void teardown(void)
{
	free(rings);
}

/* The program's write: a sample of pid, nframes frames, at r's head. */
static void put(struct profd_cpuring *r, uint32_t pid, uint32_t nframes)
{
	struct profd_cpuring_rec *rec = (void *)&r->data[r->head & (PROFD_CPURING_BYTES - 1)];
	struct profd_sample *s = (void *)(rec + 1);
	uint32_t len = (sizeof(*rec) + sizeof(*s) + nframes * 8 + 7) & ~7u;

	memset(s, 0, sizeof(*s));
	s->type = PROFD_EV_SAMPLE;
	s->pid = pid;
	s->nu = nframes;
	for (uint32_t i = 0; i < nframes; i++)
		((uint64_t *)(s + 1))[i] = 0x1000 + i;
	rec->len = len;
	r->head += len;
}

struct seen {
	uint32_t pids[4096];
	int n;
	int stop_at;	/* return non-zero after this many records; 0: never */
	int bad_frames;
};

static int on_rec(void *ctx, void *data, size_t size)
{
	struct seen *sn = ctx;
	const struct profd_sample *s = data;

	cr_assert_geq(size, sizeof(*s) + s->nu * 8);
	for (uint32_t i = 0; i < s->nu; i++)
		sn->bad_frames += ((const uint64_t *)(s + 1))[i] != 0x1000 + i;
	sn->pids[sn->n++] = s->pid;
	return sn->stop_at && sn->n == sn->stop_at ? -11 : 0;
}

TestSuite(cpurings, .init = setup, .fini = teardown);

Test(cpurings, reads_every_ring_and_advances_the_tails)
{
	struct cpurings *cr = cpurings__over(rings, 2);
	struct seen sn = {0};

	put(&rings[0], 1, 3);
	put(&rings[0], 2, 0);
	put(&rings[1], 3, 127);
	cr_assert_eq(cpurings__consume(cr, on_rec, &sn), 0);
	cr_assert_eq(sn.n, 3);
	cr_assert_eq(sn.bad_frames, 0);
	cr_assert_eq(rings[0].tail, rings[0].head);
	cr_assert_eq(rings[1].tail, rings[1].head);
	/* Nothing twice. */
	cr_assert_eq(cpurings__consume(cr, on_rec, &sn), 0);
	cr_assert_eq(sn.n, 3);
	cpurings__free(cr);
}

/* Around the ring many times, with records that end past its end: each
 * read whole, in order, none lost. */
Test(cpurings, records_past_the_end_read_whole)
{
	struct cpurings *cr = cpurings__over(rings, 1);
	uint32_t next = 0, wrapped = 0;

	for (int round = 0; round < 200; round++) {
		struct seen sn = {0};
		int n = 0;

		while (rings[0].head - rings[0].tail <
		       PROFD_CPURING_BYTES - 2 * (8 + sizeof(struct profd_sample) + 255 * 8)) {
			uint64_t at = rings[0].head & (PROFD_CPURING_BYTES - 1);
			uint32_t frames = (next * 37) % 256;

			wrapped += at + 8 + sizeof(struct profd_sample) + frames * 8 >
				   PROFD_CPURING_BYTES;
			put(&rings[0], next++, frames);
			n++;
		}
		cr_assert_eq(cpurings__consume(cr, on_rec, &sn), 0);
		cr_assert_eq(sn.n, n);
		cr_assert_eq(sn.bad_frames, 0);
		cr_assert_eq(sn.pids[n - 1], next - 1);
	}
	cr_assert_gt(wrapped, 50, "records ran into the slack %u times", wrapped);
	cr_assert_eq(cpurings__bad(cr), 0);
	cpurings__free(cr);
}

/* A consumer that stops keeps the rest for the next read, which starts
 * with the other ring so that one busy CPU cannot hold the others back. */
Test(cpurings, a_stop_keeps_the_rest)
{
	struct cpurings *cr = cpurings__over(rings, 2);
	struct seen sn = {.stop_at = 2};

	for (int i = 0; i < 4; i++)
		put(&rings[0], 10 + i, 1);
	put(&rings[1], 20, 1);
	cr_assert_eq(cpurings__consume(cr, on_rec, &sn), -11);
	cr_assert_eq(sn.n, 2);
	sn.stop_at = 0;
	cr_assert_eq(cpurings__consume(cr, on_rec, &sn), 0);
	cr_assert_eq(sn.n, 5);
	cr_assert_eq(sn.pids[2], 20, "the other ring first");
	cr_assert_eq(sn.pids[3], 12);
	cr_assert_eq(sn.pids[4], 13);
	cpurings__free(cr);
}

/* A length the program never writes (0, short, past what waits, not a
 * multiple of 8): that ring's waiting records are dropped and counted,
 * nothing is read out of bounds, and the ring is read again after. */
Test(cpurings, a_bad_length_drops_what_waits)
{
	static const uint32_t bad[] = {0, 8, 12, 1u << 20, 8 + sizeof(struct profd_sample) + 4};
	struct cpurings *cr = cpurings__over(rings, 1);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct seen sn = {0};
		struct profd_cpuring_rec *rec;

		put(&rings[0], 1, 2);
		rec = (void *)&rings[0].data[rings[0].head & (PROFD_CPURING_BYTES - 1)];
		put(&rings[0], 2, 2);
		rec->len = bad[i];
		cr_assert_eq(cpurings__consume(cr, on_rec, &sn), 0);
		cr_assert_eq(sn.n, 1, "the record before the bad one is read (length %u)", bad[i]);
		cr_assert_eq(rings[0].tail, rings[0].head);
		cr_assert_eq(cpurings__bad(cr), i + 1);
		put(&rings[0], 3, 2);
		cr_assert_eq(cpurings__consume(cr, on_rec, &sn), 0);
		cr_assert_eq(sn.n, 2);
	}
	cpurings__free(cr);
}

/* A head too far ahead of the tail (more than the ring holds) is not
 * believed either. */
Test(cpurings, a_head_past_the_ring_is_dropped)
{
	struct cpurings *cr = cpurings__over(rings, 1);
	struct seen sn = {0};

	put(&rings[0], 1, 2);
	rings[0].head += 2 * PROFD_CPURING_BYTES;
	cr_assert_eq(cpurings__consume(cr, on_rec, &sn), 0);
	cr_assert_eq(sn.n, 0);
	cr_assert_eq(cpurings__bad(cr), 1);
	cr_assert_eq(rings[0].tail, rings[0].head);
	cpurings__free(cr);
}
