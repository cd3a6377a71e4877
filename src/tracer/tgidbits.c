// SPDX-License-Identifier: BSD-2-Clause
/* tgidbits: the kernel side's per-process bits, mapped (the contract: tgidbits.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/log.h"
#include "tracer/tgidbits.h"

struct tgidbits {
	uint64_t *words;
	uint32_t per_kind;	/* words of one kind */
	size_t len;		/* the mapping's bytes */
};

struct tgidbits *tgidbits__map(int map_fd, uint32_t words)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct tgidbits *tb;
	void *p;

	tb = calloc(1, sizeof(*tb));
	if (!tb)
		return NULL;
	tb->per_kind = words;
	tb->len = ((size_t)words * PROFD_TGID_NR * sizeof(uint64_t) + page - 1) / page * page;
	p = mmap(NULL, tb->len, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED) {
		log__info("the per-process bits cannot be mapped (%s): every process's targets "
			  "and stack copy are looked up",
			  strerror(errno));
		free(tb);
		return NULL;
	}
	tb->words = p;
	return tb;
}

void tgidbits__free(struct tgidbits *tb)
{
	if (!tb)
		return;
	munmap(tb->words, tb->len);
	free(tb);
}

void tgidbits__set(struct tgidbits *tb, enum profd_tgid_bit kind, int pid)
{
	if (!tb || pid < 0 || (uint32_t)kind >= PROFD_TGID_NR || (uint32_t)pid / 64 >= tb->per_kind)
		return;
	__atomic_fetch_or(&tb->words[(size_t)kind * tb->per_kind + (uint32_t)pid / 64],
			  1ull << (pid & 63), __ATOMIC_SEQ_CST);
}
