// SPDX-License-Identifier: BSD-2-Clause
/* sitekeep: sites pinned to the identity first served; retired sites, a bounded ring. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "heap/sitekeep.h"

static struct profd_heap_site site(uint32_t tgid, uint64_t callsite)
{
	struct profd_heap_site s = {.tgid = tgid, .stack_id = 1, .callsite = callsite,
				    .fn = PROFD_FN_MALLOC};

	memcpy(s.comm, "postgres", 9);
	return s;
}

static struct sitekeep_ident ident(uint32_t pid, const char *backend_type)
{
	struct sitekeep_ident i;

	memset(&i, 0, sizeof(i));
	i.pid = pid;
	snprintf(i.name, sizeof(i.name), "postgres");
	snprintf(i.title.backend_type, sizeof(i.title.backend_type), "%s", backend_type);
	return i;
}

Test(sitekeep, a_site_keeps_the_identity_it_was_first_pinned_to)
{
	struct sitekeep k;
	struct profd_heap_site s = site(42, 0x1000), t = site(42, 0x2000);
	struct sitekeep_ident before = ident(42, ""), after = ident(42, "client backend");
	uint32_t a, b, c;

	sitekeep__init(&k, 0);
	cr_assert_eq(sitekeep__pinned(&k, &s), -1);
	cr_assert_eq(sitekeep__pin(&k, &s, &before, &a), 0);
	/* The title changed since: s keeps what it was first served as ... */
	cr_assert_eq(sitekeep__pin(&k, &s, &after, &b), 0);
	cr_assert_eq(a, b);
	cr_assert_str_eq(sitekeep__ident(&k, a)->title.backend_type, "");
	/* ... a site first seen now gets the new one. */
	cr_assert_eq(sitekeep__pin(&k, &t, &after, &c), 0);
	cr_assert_neq(c, a);
	cr_assert_str_eq(sitekeep__ident(&k, c)->title.backend_type, "client backend");
	/* Retiring keeps the pinned identity, whatever is read at exit. */
	cr_assert_eq(sitekeep__retire(&k, &s, &after, 3, 300), 0);
	cr_assert_eq(sitekeep__pinned(&k, &s), -1);
	cr_assert_eq(k.nretired, 1);
	cr_assert_eq(k.retired[0].ident, a);
	cr_assert_eq(k.retired[0].count, 3);
	cr_assert_eq(k.retired[0].bytes, 300);
	sitekeep__free(&k);
}

static int all_gone(void *ctx, uint32_t pid)
{
	return pid == *(uint32_t *)ctx;
}

Test(sitekeep, retired_sites_are_a_ring_and_identities_are_freed_with_their_last_site)
{
	struct sitekeep k;
	struct sitekeep_ident id;
	uint32_t gone = 7, x;

	sitekeep__init(&k, 4);
	for (uint32_t pid = 1; pid <= 6; pid++) {
		struct profd_heap_site s = site(pid, 0x1000);

		id = ident(pid, "client backend");
		cr_assert_eq(sitekeep__retire(&k, &s, &id, 1, 64), 0);
	}
	/* 6 retired into 4: the two oldest dropped, their identities freed. */
	cr_assert_eq(k.nretired, 4);
	cr_assert_eq(k.retired_total, 6);
	cr_assert_eq(k.dropped, 2);
	cr_assert_eq(k.nidents - k.nfree, 4);	/* one live identity per kept site */
	for (size_t i = 0; i < k.nretired; i++)
		cr_assert_geq(k.retired[i].site.tgid, 3);
	/* The same site and identity again adds up. */
	{
		struct profd_heap_site s = site(6, 0x1000);

		id = ident(6, "client backend");
		cr_assert_eq(sitekeep__retire(&k, &s, &id, 2, 128), 0);
		cr_assert_eq(k.retired_total, 6);
		for (size_t i = 0; i < k.nretired; i++)
			if (k.retired[i].site.tgid == 6)
				cr_assert_eq(k.retired[i].count, 3);
	}
	/* A pin of a process gone goes, and its identity slot is reused. */
	{
		struct profd_heap_site s = site(gone, 0x1000);

		id = ident(gone, "");
		cr_assert_eq(sitekeep__pin(&k, &s, &id, &x), 0);
		cr_assert_eq(k.npins, 1);
		cr_assert_eq(sitekeep__unpin_gone(&k, all_gone, &gone), 0);
		cr_assert_eq(k.npins, 0);
		cr_assert_eq(k.idents[x].refs, 0);
	}
	sitekeep__free(&k);
}
