// SPDX-License-Identifier: BSD-2-Clause
/* lib/: the hash table every module indexes with, the string buffer, and
 * the CPU accounting by stage. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/htab.h"
#include "lib/mapped_file.h"
#include "lib/stagecpu.h"
#include "lib/strbuf.h"

struct table {
	uint64_t *keys;
	size_t n, cap;
	struct htab index;
};

static bool key_eq(const void *ctx, size_t pos, const void *key)
{
	return ((const struct table *)ctx)->keys[pos] == *(const uint64_t *)key;
}

/* A deliberately bad hash so that runs collide and wrap around the table. */
static uint32_t bad_hash(uint64_t k)
{
	return (uint32_t)(k % 7);
}

static long find(struct table *t, uint64_t k)
{
	return htab__find(&t->index, bad_hash(k), key_eq, t, &k, NULL);
}

static void insert(struct table *t, uint64_t k)
{
	struct htab_slot *slot;

	cr_assert_eq(htab__reserve(&t->index), 0);
	cr_assert_eq(array__grow(&t->keys, &t->cap, t->n + 1, sizeof(*t->keys)), 0);
	cr_assert_lt(htab__find(&t->index, bad_hash(k), key_eq, t, &k, &slot), 0);
	t->keys[t->n] = k;
	htab__set(&t->index, slot, bad_hash(k), t->n++);
}

/* Swap-remove, as procs and the symbolizer's object cache do. */
static void erase(struct table *t, uint64_t k)
{
	long pos = find(t, k);
	size_t last = t->n - 1;

	cr_assert_geq(pos, 0);
	cr_assert_eq(htab__remove(&t->index, bad_hash(k), pos), 0);
	if ((size_t)pos != last) {
		t->keys[pos] = t->keys[last];
		cr_assert_eq(htab__move(&t->index, bad_hash(t->keys[pos]), last, pos), 0);
	}
	t->n--;
}

Test(htab, insert_find_remove_with_collisions)
{
	struct table t = {};

	cr_assert_lt(find(&t, 1), 0, "an empty table finds nothing");
	for (uint64_t k = 1; k <= 500; k++)
		insert(&t, k * 13);
	cr_assert_eq(htab__count(&t.index), 500);
	for (uint64_t k = 1; k <= 500; k++)
		cr_assert_eq(t.keys[find(&t, k * 13)], k * 13);
	/* Remove every third: the runs they sat in must stay searchable. */
	for (uint64_t k = 3; k <= 500; k += 3)
		erase(&t, k * 13);
	for (uint64_t k = 1; k <= 500; k++) {
		long pos = find(&t, k * 13);

		if (k % 3 == 0)
			cr_assert_lt(pos, 0, "removed key %lu still found", (unsigned long)(k * 13));
		else
			cr_assert(pos >= 0 && t.keys[pos] == k * 13, "key %lu lost", (unsigned long)k);
	}
	cr_assert_eq(htab__count(&t.index), 500 - 166);
	free(t.keys);
	htab__free(&t.index);
}

Test(strbuf, appends_formats_and_detaches)
{
	struct strbuf sb = {};
	size_t len;
	char *s;

	strbuf__adds(&sb, "pid ");
	strbuf__addf(&sb, "%d", 1234567);
	strbuf__add(&sb, ", x", 2);
	cr_assert_str_eq(sb.buf, "pid 1234567, ");
	for (int i = 0; i < 10000; i++)
		strbuf__add(&sb, "y", 1);
	cr_assert_eq(strbuf__err(&sb), 0);
	s = strbuf__detach(&sb, &len);
	cr_assert_eq(len, 13 + 10000);
	cr_assert_eq(strlen(s), len);
	cr_assert_null(sb.buf);
	free(s);
	s = strbuf__detach(&sb, &len);
	cr_assert_str_eq(s, "", "an empty buffer detaches as \"\"");
	free(s);
}

Test(hash, mixes_every_bit)
{
	/* Keys differing in one high bit must land in different low bits. */
	uint32_t a = hash__final(hash__u64(HASH_SEED, 1ull << 40));
	uint32_t b = hash__final(hash__u64(HASH_SEED, 1ull << 41));

	cr_assert_neq(a & 0xff, b & 0xff);
}

/* Burn about ms of this thread's CPU. */
static void burn(int64_t ms)
{
	int64_t end = clock__thread_cpu_ns() + ms * 1000000;
	volatile uint64_t x = 0;

	while (clock__thread_cpu_ns() < end)
		x++;
}

Test(stagecpu, nested_stages_are_charged_once_each)
{
	struct stagecpu s = {0};
	int64_t t0 = clock__thread_cpu_ns(), total;

	stagecpu__enter(&s, 1);
	burn(20);
	stagecpu__enter(&s, 2);		/* inside 1: 1 is not charged meanwhile */
	burn(40);
	stagecpu__leave(&s);
	burn(20);
	stagecpu__leave(&s);
	burn(10);			/* outside any stage: charged to none */
	total = clock__thread_cpu_ns() - t0;

	/* Inside the span the split is by wall time, so a preemption of this
	 * thread (a loaded machine) moves a little between 1 and 2; their sum
	 * is the span's CPU time exactly. */
	cr_expect_geq(s.ns[1], 30000000, "stage 1: %llu ns", (unsigned long long)s.ns[1]);
	cr_expect_lt(s.ns[1], 60000000, "stage 1 charged for 2's time: %llu ns",
		     (unsigned long long)s.ns[1]);
	cr_expect_geq(s.ns[2], 30000000, "stage 2: %llu ns", (unsigned long long)s.ns[2]);
	cr_expect_geq(s.ns[1] + s.ns[2], 78000000, "the span's time was not all charged");
	cr_expect_lt(s.ns[1] + s.ns[2], (uint64_t)total - 9000000, "the time outside was charged");
	cr_expect_eq(s.ns[0] + s.ns[3], 0);
	cr_expect_eq(s.depth, 0);
	stagecpu__leave(&s);		/* one leave too many: ignored */
	cr_expect_eq(s.depth, 0);
}

Test(stagecpu, deeper_than_its_stack_charges_the_deepest_it_holds)
{
	struct stagecpu s = {0};

	for (int i = 0; i < STAGECPU_DEPTH + 3; i++)
		stagecpu__enter(&s, i % STAGECPU_MAX);
	burn(5);
	for (int i = 0; i < STAGECPU_DEPTH + 3; i++)
		stagecpu__leave(&s);
	cr_expect_geq(s.ns[(STAGECPU_DEPTH - 1) % STAGECPU_MAX], 4000000);
	cr_expect_eq(s.depth, 0);
	stagecpu__enter(&s, -1);	/* out of range: stage 0 */
	burn(2);
	stagecpu__leave(&s);
	cr_expect_geq(s.ns[0], 1000000);
}

/* Mapped only when no user but root can truncate the file under the
 * mapping (the tests run as root, which owns what they create). */
Test(mapped_file, root_only_says_who_can_change_the_file)
{
	char path[] = "/tmp/profd-root-only-XXXXXX", dir[] = "/tmp/profd-root-only-d-XXXXXX";
	static const struct {
		mode_t mode;
		uid_t uid;
		bool want;
	} cases[] = {
		{0644, 0, true},  {0444, 0, true},  {0755, 0, true},
		{0664, 0, false}, {0646, 0, false}, {0666, 0, false},
		{0644, 65534, false}, {0444, 1000, false},
	};
	int fd = mkstemp(path), dfd;

	cr_assert_geq(fd, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(fchown(fd, cases[i].uid, 0), 0);
		cr_assert_eq(fchmod(fd, cases[i].mode), 0);
		cr_expect_eq(mapped_file__root_only(fd), cases[i].want, "mode %o uid %d",
			     (unsigned)cases[i].mode, (int)cases[i].uid);
	}
	close(fd);
	unlink(path);
	/* Not a regular file: never. */
	cr_assert_not_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(dfd, 0);
	cr_expect_not(mapped_file__root_only(dfd));
	close(dfd);
	rmdir(dir);
	cr_expect_not(mapped_file__root_only(-1));
}
