// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof_gen OUT [gz]: writes a small but realistic CPU profile built with
 * the pprof builder, so that t_pprof_clients.sh can check it with protoc
 * and `go tool pprof`.  The contents are fixed; the test greps for them.
 *
 *   main -> run_queries -> hash_bytes (inlined)           60 samples, tid 4242
 *   main -> parse_query                                   25 samples, tid 4243
 *   main -> parse_query -> [kernel] ... ksys_read          15 samples, tid 4243
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof/pprof.h"

#define GEN_PERIOD 10101010

struct gen_locs {
	uint64_t main, run, parse, k_read, k_syscall, k_entry;
};

static uint64_t gen_location(struct pprof *p, uint64_t mapping, uint64_t addr, uint64_t fn,
			     int64_t line)
{
	struct pprof_line ln = {fn, line};

	return pprof__location(p, mapping, addr, &ln, 1);
}

/* Mappings, functions and locations; 0 on success. */
static int gen_symbols(struct pprof *p, struct gen_locs *l)
{
	const struct pprof_mapping app = {
		.start = 0x555555554000,
		.limit = 0x555555600000,
		.offset = 0,
		.file = "/usr/bin/app-gen",
		.build_id = "6f1e3c0d2a4b5c6d7e8f90a1b2c3d4e5f6a7b8c9",
		.has_functions = true,
		.has_filenames = true,
		.has_line_numbers = true,
		.has_inline_frames = true,
	};
	const struct pprof_mapping kernel = {
		.start = 0xffffffff81000000,
		.limit = 0xffffffff83000000,
		.file = "[kernel.kallsyms]",
		.has_functions = true,
	};
	struct pprof_line inlined[2];
	uint64_t m_app, m_kernel;

	m_app = pprof__mapping(p, &app);
	m_kernel = pprof__mapping(p, &kernel);
	if (!m_app || !m_kernel)
		return -ENOMEM;

	/* hash_bytes is inlined into run_queries: one address, two lines,
	 * the innermost first. */
	inlined[0] = (struct pprof_line){pprof__function(p, "hash_bytes", NULL, "hash.h", 5), 7};
	inlined[1] = (struct pprof_line){pprof__function(p, "run_queries", NULL, "app.c", 40), 55};
	l->run = pprof__location(p, m_app, 0x555555555200, inlined, 2);
	l->main = gen_location(p, m_app, 0x555555555100,
			       pprof__function(p, "main", NULL, "app.c", 10), 15);
	l->parse = gen_location(p, m_app, 0x555555555300,
				pprof__function(p, "parse_query", NULL, "app.c", 80), 90);
	l->k_read = gen_location(p, m_kernel, 0xffffffff81a00010,
				 pprof__function(p, "ksys_read", NULL, NULL, 0), 0);
	l->k_syscall = gen_location(p, m_kernel, 0xffffffff81a00100,
				    pprof__function(p, "do_syscall_64", NULL, NULL, 0), 0);
	l->k_entry = gen_location(p, m_kernel, 0xffffffff81c00000,
				  pprof__function(p, "entry_SYSCALL_64", NULL, NULL, 0), 0);
	if (!l->run || !l->main || !l->parse || !l->k_read || !l->k_syscall || !l->k_entry)
		return -ENOMEM;
	return 0;
}

/* Adds one tick at a time, as the daemon does, so the merge is exercised. */
static int gen_ticks(struct pprof *p, const uint64_t *locs, size_t nlocs, int count, int64_t tid,
		     const char *thread)
{
	const int64_t values[2] = {1, GEN_PERIOD};
	const struct pprof_label labels[] = {
		{.key = "pid", .num = 4242},
		{.key = "tid", .num = tid},
		{.key = "thread_name", .str = thread},
		{.key = "process_name", .str = "app-gen"},
	};
	int i, err;

	for (i = 0; i < count; i++) {
		err = pprof__add_sample(p, locs, nlocs, values, labels, 4);
		if (err)
			return err;
	}
	return 0;
}

static struct pprof *gen_profile(void)
{
	const struct pprof_value_type types[] = {{"samples", "count"}, {"cpu", "nanoseconds"}};
	struct pprof *p;
	struct gen_locs l;
	uint64_t hot[2], parse[2], kernel[5];
	int err;

	p = pprof__new(types, 2, types[1], GEN_PERIOD);
	if (!p)
		return NULL;
	err = gen_symbols(p, &l);
	if (err)
		goto err_free;

	/* Leaf first. */
	hot[0] = l.run;
	hot[1] = l.main;
	parse[0] = l.parse;
	parse[1] = l.main;
	kernel[0] = l.k_read;
	kernel[1] = l.k_syscall;
	kernel[2] = l.k_entry;
	kernel[3] = l.parse;
	kernel[4] = l.main;
	err = gen_ticks(p, hot, 2, 60, 4242, "app-main");
	if (!err)
		err = gen_ticks(p, parse, 2, 25, 4243, "app-worker");
	if (!err)
		err = gen_ticks(p, kernel, 5, 15, 4243, "app-worker");
	if (!err)
		err = pprof__add_comment(p, "lost samples: 3");
	if (!err)
		err = pprof__set_default_sample_type(p, "cpu");
	if (err)
		goto err_free;
	pprof__set_time(p, 1700000000000000000, 60000000000);
	return p;

err_free:
	pprof__free(p);
	return NULL;
}

static int write_file(const char *path, const uint8_t *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int err = 0;

	if (!f)
		return -errno;
	if (fwrite(data, 1, len, f) != len)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int main(int argc, char **argv)
{
	struct pprof *p = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	bool gz;
	int err;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "gz"))) {
		fprintf(stderr, "usage: %s OUT [gz]\n", argv[0]);
		return 2;
	}
	gz = argc == 3;
	p = gen_profile();
	if (!p) {
		fprintf(stderr, "pprof_gen: building the profile failed\n");
		err = -ENOMEM;
		goto cleanup;
	}
	err = pprof__encode(p, gz, &buf, &len);
	if (err) {
		fprintf(stderr, "pprof_gen: encode: %s\n", strerror(-err));
		goto cleanup;
	}
	err = write_file(argv[1], buf, len);
	if (err)
		fprintf(stderr, "pprof_gen: %s: %s\n", argv[1], strerror(-err));
cleanup:
	free(buf);
	pprof__free(p);
	return err ? 1 : 0;
}
