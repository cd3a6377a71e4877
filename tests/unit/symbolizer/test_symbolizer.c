// SPDX-License-Identifier: BSD-2-Clause
/*
 * Symbolizer tests (one file for one module, however long: the cases share
 * their fixtures).  Expected values come from independent tools (binutils'
 * addr2line, objdump, readelf, nm) run on the same files, and line numbers
 * from grep -n on the MARK comments of tests/workloads/inline_target.c.
 *
 * Paths: $BUILD (absolute build dir) and $TESTS (absolute tests/ dir), as
 * tests/run.sh sets them, else derived from /proc/self/exe, which is
 * build/tests/unit_symbolizer.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "symbolizer/cfi.h"
#include "symbolizer/kallsyms.h"
#include "symbolizer/symbolizer.h"

#define OUT_MAX (4 << 20)

static char st_build[PATH_MAX], st_tests[PATH_MAX];
static char st_target[PATH_MAX], st_source[PATH_MAX];
static char st_tmp[] = "/tmp/profd-symtest-XXXXXX";
static struct symbolizer *st_sym;

/* --- helpers --- */

/* snprintf that must not truncate (and, used, silences -Wformat-truncation) */
#define st_fmt(buf, ...) cr_assert_lt((size_t)snprintf(buf, sizeof(buf), __VA_ARGS__), sizeof(buf))

static void st_paths(void)
{
	const char *b = getenv("BUILD"), *t = getenv("TESTS");
	char exe[PATH_MAX], up[PATH_MAX + 8];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(n, 0);
	exe[n] = '\0';
	/* exe is <build>/tests/unit_symbolizer */
	if (b && *b) {
		st_fmt(st_build, "%s", b);
	} else {
		st_fmt(up, "%s/..", dirname(exe));
		cr_assert_not_null(realpath(up, st_build));
	}
	if (t && *t) {
		st_fmt(st_tests, "%s", t);
	} else {
		st_fmt(up, "%s/../tests", st_build);
		cr_assert_not_null(realpath(up, st_tests));
	}
	st_fmt(st_target, "%s/tests/inline_target", st_build);
	st_fmt(st_source, "%s/workloads/inline_target.c", st_tests);
	cr_assert_eq(access(st_target, R_OK), 0, "no %s (make it first)", st_target);
	cr_assert_eq(access(st_source, R_OK), 0, "no %s", st_source);
}

static void st_setup(void)
{
	st_paths();
	cr_assert_not_null(mkdtemp(st_tmp));
	st_sym = symbolizer__new(256 << 20);
	cr_assert_not_null(st_sym);
}

static void st_teardown(void)
{
	char cmd[PATH_MAX + 16];

	symbolizer__free(st_sym);
	st_sym = NULL;
	if (strcmp(st_tmp, "/tmp/profd-symtest-XXXXXX")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", st_tmp);
		if (system(cmd))
			cr_log_warn("could not remove %s", st_tmp);
	}
}

/* Run a shell command; returns its stdout (caller frees) and exit status. */
static char *st_run(int *status, const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	size_t len = 0, got;
	va_list ap;
	char *out;
	FILE *p;

	/* binutils' BFD tools read only the host's objects, gcc makes only its: the arm64 unit
	 * tests, run on x86-64 under qemu-user, name the cross ones
	 * (CROSS_COMPILE=aarch64-linux-gnu-, tests/sys/t_arm64_build.sh). */
	static const char *const bfd_tools[] = {"objdump ", "strip ", "addr2line ", "objcopy ", "nm ",
						"gcc "};
	const char *cross = getenv("CROSS_COMPILE");

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	for (size_t i = 0; cross && *cross && i < sizeof(bfd_tools) / sizeof(bfd_tools[0]); i++) {
		if (!strncmp(cmd, bfd_tools[i], strlen(bfd_tools[i]))) {
			len = strlen(cross);
			cr_assert_lt(strlen(cmd) + len, sizeof(cmd));
			memmove(cmd + len, cmd, strlen(cmd) + 1);
			memcpy(cmd, cross, len);
			len = 0;
			break;
		}
	}
	out = malloc(OUT_MAX);
	cr_assert_not_null(out);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "popen %s", cmd);
	while ((got = fread(out + len, 1, OUT_MAX - 1 - len, p)) > 0)
		len += got;
	out[len] = '\0';
	*status = pclose(p);
	return out;
}

/* Like st_run, but the command must succeed. */
static char *st_must(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int status;
	char *out;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	out = st_run(&status, "%s", cmd);
	cr_assert_eq(status, 0, "command failed: %s", cmd);
	return out;
}

static int st_count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The line of the MARK comment in inline_target.c, by grep -n. */
static int st_mark_line(const char *mark)
{
	char *out = st_must("grep -n -F 'MARK: %s' '%s'", mark, st_source);
	int line = atoi(out);

	cr_assert_gt(line, 0, "MARK %s not found", mark);
	cr_assert_eq(st_count_lines(out), 1, "MARK %s is not unique", mark);
	free(out);
	return line;
}

/* readelf -lW's PT_LOAD table maps a virtual address to a file offset. */
static uint64_t st_vaddr_to_offset(const char *bin, uint64_t vaddr)
{
	char *out = st_must("readelf -lW '%s'", bin), *line, *save = NULL;
	uint64_t off = UINT64_MAX;

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long o, v, p, fsz;

		if (sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx", &o, &v, &p, &fsz) != 4)
			continue;
		if (vaddr >= v && vaddr < v + fsz) {
			off = vaddr - v + o;
			break;
		}
	}
	free(out);
	cr_assert_neq(off, UINT64_MAX, "%#" PRIx64 " not in a PT_LOAD of %s", vaddr, bin);
	return off;
}

static char *st_build_id(const char *bin)
{
	char *out = st_must("readelf -n '%s' | sed -n 's/.*Build ID: *//p'", bin);

	out[strcspn(out, "\n")] = '\0';
	cr_assert_gt(strlen(out), 0, "no build ID in %s", bin);
	return out;
}

static uint64_t st_nm_addr(const char *bin, const char *opts, const char *sym)
{
	char *out = st_must("nm %s '%s' | awk '{ sub(/@.*/, \"\", $3) } "
			    "$3 == \"%s\" { print $1; exit }'",
			    opts, bin, sym);
	uint64_t addr = strtoull(out, NULL, 16);

	cr_assert_neq(addr, 0, "%s not in nm %s %s", sym, opts, bin);
	free(out);
	return addr;
}

struct st_frame {
	char function[128];
	char file[256];
	int line;
};

struct st_oracle {
	uint64_t addr;
	int n;
	struct st_frame f[SYM_MAX_FRAMES];
};

/* The address of every instruction of function fn, by objdump. */
static int st_insns(const char *bin, const char *fn, uint64_t *addrs, int max)
{
	char *dis, *line, *save = NULL;
	int n = 0;

	dis = st_must("objdump -d --no-show-raw-insn --disassemble='%s' '%s'", fn, bin);
	for (line = strtok_r(dis, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;
		char colon;

		if (sscanf(line, " %llx%c", &a, &colon) == 2 && colon == ':' && line[0] == ' ') {
			cr_assert_lt(n, max);
			addrs[n++] = a;
		}
	}
	free(dis);
	cr_assert_gt(n, 0, "objdump found no %s in %s", fn, bin);
	return n;
}

/* binutils' view of every instruction of function fn in bin: addr2line -i
 * -f -a over the addresses objdump lists.  Returns the count. */
static int st_addr2line(const char *bin, const char *fn, struct st_oracle *ora, int max)
{
	char *out, *line, *save = NULL, *args;
	uint64_t addrs[512];
	int n = 0, cur = -1, i, ninsns;
	size_t alen = 0;

	ninsns = st_insns(bin, fn, addrs, 512);
	args = calloc(ninsns, 20);
	cr_assert_not_null(args);
	for (i = 0; i < ninsns; i++)
		alen += sprintf(args + alen, " %" PRIx64, addrs[i]);
	out = st_must("addr2line -i -f -a -e '%s'%s", bin, args);
	free(args);

	save = NULL;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct st_frame *f;
		char *loc, *colon;

		if (!strncmp(line, "0x", 2)) {
			cr_assert_lt(n, max);
			cur = n++;
			ora[cur].addr = strtoull(line, NULL, 16);
			ora[cur].n = 0;
			continue;
		}
		cr_assert_geq(cur, 0);
		loc = strtok_r(NULL, "\n", &save);
		cr_assert_not_null(loc);
		cr_assert_lt(ora[cur].n, SYM_MAX_FRAMES);
		f = &ora[cur].f[ora[cur].n++];
		snprintf(f->function, sizeof(f->function), "%s", line);
		colon = strrchr(loc, ':');
		cr_assert_not_null(colon);
		*colon = '\0';
		snprintf(f->file, sizeof(f->file), "%s", loc);
		f->line = atoi(colon + 1);
	}
	free(out);
	return n;
}

static const char *st_base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

static struct sym_object_key st_key(const char *path)
{
	struct sym_object_key key = {.path = path};
	struct stat st;

	cr_assert_eq(stat(path, &st), 0, "stat %s", path);
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	return key;
}

/*
 * Resolve every instruction of fn (in a binary with DWARF) and compare all
 * frames with addr2line.  With call_mark, also find the address at which
 * binutils puts mix() innermost at the multiply line, inlined at call_mark,
 * check it against the MARK lines directly, and return it.
 */
static struct st_oracle st_check_function(const char *bin, const char *fn, const char *call_mark)
{
	static struct st_oracle ora[512];
	int n = st_addr2line(bin, fn, ora, 512), i, j, mix_line, call_line;
	struct sym_object_key key = st_key(bin);
	struct st_oracle hit = {0};

	mix_line = st_mark_line("mix-multiply");
	call_line = call_mark ? st_mark_line(call_mark) : -1;
	for (i = 0; i < n; i++) {
		uint64_t off = st_vaddr_to_offset(bin, ora[i].addr);
		struct sym_result res;

		cr_assert_eq(symbolizer__resolve(st_sym, &key, off, &res), 0);
		cr_assert_eq(res.nframes, ora[i].n, "%s+%#" PRIx64 ": %d frames, addr2line %d", fn,
			     ora[i].addr, res.nframes, ora[i].n);
		for (j = 0; j < res.nframes; j++) {
			struct sym_frame *f = &res.frames[j];

			cr_assert_str_eq(f->function, ora[i].f[j].function, "%#" PRIx64 " frame %d",
					 ora[i].addr, j);
			cr_assert_str_eq(st_base(f->file), "inline_target.c");
			cr_assert_str_eq(f->file, ora[i].f[j].file);
			cr_assert_eq(f->line, ora[i].f[j].line,
				     "%#" PRIx64 " frame %d: %s:%d vs %d", ora[i].addr, j,
				     f->function, f->line, ora[i].f[j].line);
		}
		if (call_mark && ora[i].n == 2 && !strcmp(ora[i].f[0].function, "mix") &&
		    ora[i].f[0].line == mix_line && ora[i].f[1].line == call_line)
			hit = ora[i];
	}
	if (!call_mark)
		return hit;
	cr_assert_neq(hit.addr, 0, "addr2line never puts mix():%d inlined at %s():%d in %s",
		      mix_line, fn, call_line, bin);

	/* The named values, independently of addr2line. */
	{
		struct sym_result res;

		cr_assert_eq(
		    symbolizer__resolve(st_sym, &key, st_vaddr_to_offset(bin, hit.addr), &res), 0);
		cr_assert_eq(res.nframes, 2);
		cr_assert_str_eq(res.frames[0].function, "mix");
		cr_assert_eq(res.frames[0].line, mix_line);
		cr_assert_str_eq(st_base(res.frames[0].file), "inline_target.c");
		cr_assert_str_eq(res.frames[1].function, fn);
		cr_assert_eq(res.frames[1].line, call_line);
		cr_assert_str_eq(st_base(res.frames[1].file), "inline_target.c");
		/* Absolute, like addr2line's, so a person can open it. */
		cr_assert_eq(res.frames[0].file[0], '/');
	}
	return hit;
}

/* Where addr lies in this process: the maps line's path, identity and the
 * file offset, exactly as the daemon will see it for a target process. */
static struct sym_object_key st_maps_key(const void *addr, uint64_t *off, char *path, size_t size)
{
	struct sym_object_key key = {0};
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "re");
	bool found = false;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned int maj, min;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %n", &start, &end, &pgoff, &maj,
			   &min, &ino, &pos) < 6 ||
		    !pos)
			continue;
		if ((uintptr_t)addr < start || (uintptr_t)addr >= end)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, size, "%s", line + pos);
		key.path = path;
		key.dev = makedev(maj, min);
		key.ino = ino;
		*off = (uintptr_t)addr - start + pgoff;
		found = true;
		break;
	}
	fclose(f);
	cr_assert(found, "%p not mapped", addr);
	return key;
}

/* Names nm gives the symbol(s) at the address of sym: aliases share it. */
static char *st_aliases(const char *bin, const char *opts, uint64_t addr)
{
	char *out = st_must("nm %s '%s' | awk '$1 == \"%016" PRIx64 "\" { $1 = $2 = \"\"; "
			    "sub(/^ +/, \"\"); sub(/@.*/, \"\"); print \"|\" $0 \"|\" }'",
			    opts, bin, addr);

	cr_assert_gt(strlen(out), 0);
	return out;
}

static void st_assert_alias(const char *aliases, const char *name)
{
	char want[512];

	cr_assert_not_null(name);
	snprintf(want, sizeof(want), "|%s|", name);
	cr_assert_not_null(strstr(aliases, want), "%s is none of %s", name, aliases);
}

/* --- DWARF: names, files, lines, inlined frames --- */

TestSuite(symbolizer, .init = st_setup, .fini = st_teardown, .timeout = 120);

Test(symbolizer, inlined_frames_match_addr2line_pie)
{
	st_check_function(st_target, "hot_a", "hot_a-calls-mix");
	st_check_function(st_target, "hot_b", "hot_b-calls-mix");
	st_check_function(st_target, "run_workload", NULL);
	st_check_function(st_target, "main", NULL);
}

Test(symbolizer, call_chain_lines)
{
	struct sym_object_key key = st_key(st_target);
	uint64_t a = st_nm_addr(st_target, "", "run_workload");
	struct sym_result res;

	/* The entry of an out-of-line function: one frame, its own name. */
	cr_assert_eq(symbolizer__resolve(st_sym, &key, st_vaddr_to_offset(st_target, a), &res), 0);
	cr_assert_eq(res.nframes, 1);
	cr_assert_str_eq(res.frames[0].function, "run_workload");
	a = st_nm_addr(st_target, "", "main");
	cr_assert_eq(symbolizer__resolve(st_sym, &key, st_vaddr_to_offset(st_target, a), &res), 0);
	cr_assert_eq(res.nframes, 1);
	cr_assert_str_eq(res.frames[0].function, "main");
}

Test(symbolizer, object_info_pie)
{
	struct sym_object_key key = st_key(st_target);
	struct sym_object_info info;
	char *bid = st_build_id(st_target);

	cr_assert_eq(symbolizer__object_info(st_sym, &key, &info), 0);
	cr_assert_str_eq(info.build_id, bid);
	cr_assert(info.has_functions);
	cr_assert(info.has_filenames);
	cr_assert(info.has_line_numbers);
	cr_assert(info.has_inline_frames);
	cr_assert_eq(symbolizer__cache_objects(st_sym), 1);
	cr_assert_gt(symbolizer__cache_bytes(st_sym), 0);
	free(bid);
}

Test(symbolizer, inlined_frames_non_pie)
{
	char bin[PATH_MAX + 32], *out;
	int status;

	snprintf(bin, sizeof(bin), "%s/inline_nopie", st_tmp);
	out = st_run(&status, "gcc -O2 -g -fno-omit-frame-pointer -no-pie -o '%s' '%s' 2>&1", bin,
		     st_source);
	free(out);
	if (status)
		cr_skip_test("no C compiler to build a non-PIE copy");
	out = st_must("readelf -h '%s'", bin);
	cr_assert_not_null(strstr(out, "EXEC"), "not ET_EXEC: %s", out);
	free(out);
	st_check_function(bin, "hot_a", "hot_a-calls-mix");
	st_check_function(bin, "hot_b", "hot_b-calls-mix");
}

/* --- no DWARF: .symtab, then .dynsym --- */

Test(symbolizer, strip_debug_uses_symtab)
{
	char bin[PATH_MAX + 32], *bid;
	struct sym_object_info info;
	struct sym_object_key key;
	struct sym_result res;
	struct st_oracle hit;

	/* The inlined address, found in the copy that still has DWARF. */
	hit = st_check_function(st_target, "hot_a", "hot_a-calls-mix");
	snprintf(bin, sizeof(bin), "%s/inline_strip_debug", st_tmp);
	free(st_must("objcopy --strip-debug '%s' '%s'", st_target, bin));
	key = st_key(bin);

	cr_assert_eq(symbolizer__object_info(st_sym, &key, &info), 0);
	cr_assert(info.has_functions);
	cr_assert_not(info.has_filenames);
	cr_assert_not(info.has_line_numbers);
	cr_assert_not(info.has_inline_frames);
	bid = st_build_id(bin);
	cr_assert_str_eq(info.build_id, bid);
	free(bid);

	cr_assert_eq(symbolizer__resolve(st_sym, &key, st_vaddr_to_offset(bin, hit.addr), &res), 0);
	cr_assert_eq(res.nframes, 1);
	cr_assert_str_eq(res.frames[0].function, "hot_a");
	cr_assert_null(res.frames[0].file);
	cr_assert_eq(res.frames[0].line, 0);
}

/* Nothing names its code but .eh_frame: each function is named after its
 * FDE's start ("inline_stripped+0x1234"), the same name at every address
 * in it, and another function gets another name. */
Test(symbolizer, fully_stripped_executable_named_by_fde)
{
	char bin[PATH_MAX + 32];
	struct sym_object_info info;
	struct sym_object_key key;
	struct sym_result res;
	uint64_t a = st_nm_addr(st_target, "", "hot_a");

	snprintf(bin, sizeof(bin), "%s/inline_stripped", st_tmp);
	free(st_must("strip -o '%s' '%s'", bin, st_target));
	key = st_key(bin);
	cr_assert_eq(symbolizer__object_info(st_sym, &key, &info), 0);
	/* Its .dynsym holds only imports: nothing names its own code. */
	cr_assert_not(info.has_functions);
	cr_assert_not(info.has_filenames);
	cr_assert_not(info.has_inline_frames);
	cr_assert_not_null(info.build_id);
	uint64_t b = st_nm_addr(st_target, "", "hot_b");
	char want[64], first[128];

	cr_assert_eq(symbolizer__resolve(st_sym, &key, st_vaddr_to_offset(bin, a), &res), 0);
	cr_assert_eq(res.nframes, 1);
	snprintf(want, sizeof(want), "inline_stripped+%#" PRIx64, a);
	cr_assert_str_eq(res.frames[0].function, want);
	cr_assert_null(res.frames[0].file);
	snprintf(first, sizeof(first), "%s", res.frames[0].function);
	/* Further into the same function: the same name. */
	cr_assert_eq(symbolizer__resolve(st_sym, &key, st_vaddr_to_offset(bin, a) + 9, &res), 0);
	cr_assert_str_eq(res.frames[0].function, first);
	cr_assert_eq(symbolizer__resolve(st_sym, &key, st_vaddr_to_offset(bin, b), &res), 0);
	snprintf(want, sizeof(want), "inline_stripped+%#" PRIx64, b);
	cr_assert_str_eq(res.frames[0].function, want);
}

/* A copy of libc with neither .symtab nor a way to find its debug info (no
 * build ID note, no debuglink): names can only come from .dynsym. */
static void st_stripped_libc(char *bin, size_t size)
{
	char path[PATH_MAX];
	uint64_t off;
	void *fn = dlsym(RTLD_DEFAULT, "getpid");

	cr_assert_not_null(fn);
	st_maps_key(fn, &off, path, sizeof(path));
	snprintf(bin, size, "%s/libc-dynsym.so", st_tmp);
	free(st_must("strip --strip-all --remove-section=.note.gnu.build-id "
		     "--remove-section=.gnu_debuglink -o '%s' '%s'",
		     bin, path));
}

Test(symbolizer, dynsym_only_library)
{
	static const char *const funcs[] = {"getpid", "malloc", "strlen", "qsort"};
	char bin[PATH_MAX + 32];
	struct sym_object_info info;
	struct sym_object_key key;
	size_t i;

	st_stripped_libc(bin, sizeof(bin));
	key = st_key(bin);
	cr_assert_eq(symbolizer__object_info(st_sym, &key, &info), 0);
	cr_assert(info.has_functions);
	cr_assert_not(info.has_filenames);
	cr_assert_not(info.has_line_numbers);
	cr_assert_not(info.has_inline_frames);
	cr_assert_null(info.build_id);

	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		uint64_t a = st_nm_addr(bin, "-D --defined-only", funcs[i]), d;
		char *aliases = st_aliases(bin, "-D --defined-only", a);

		for (d = 0; d < 2; d++) {
			struct sym_result res;

			cr_assert_eq(
			    symbolizer__resolve(st_sym, &key, st_vaddr_to_offset(bin, a + d), &res),
			    0);
			cr_assert_eq(res.nframes, 1, "%s+%" PRIu64, funcs[i], d);
			st_assert_alias(aliases, res.frames[0].function);
			cr_assert_null(res.frames[0].file);
		}
		free(aliases);
	}
}

/* The daemon's path: an address in a live mapping, keyed by what
 * /proc/PID/maps says (major:minor made into a dev_t, inode). */
Test(symbolizer, live_mapping_of_libc)
{
	char path[PATH_MAX], *aliases, *bid, dbg[PATH_MAX + 64];
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	struct sym_object_info info;
	struct sym_object_key key;
	struct sym_result res;
	uint64_t off;

	cr_assert_not_null(fn);
	key = st_maps_key(fn, &off, path, sizeof(path));
	cr_assert_eq(symbolizer__resolve(st_sym, &key, off, &res), 0);
	cr_assert_eq(res.nframes, 1);
	aliases =
	    st_aliases(path, "-D --defined-only", st_nm_addr(path, "-D --defined-only", "getpid"));
	st_assert_alias(aliases, res.frames[0].function);
	free(aliases);

	cr_assert_eq(symbolizer__object_info(st_sym, &key, &info), 0);
	bid = st_build_id(path);
	cr_assert_str_eq(info.build_id, bid);
	/* With libc6-dbg installed, the DWARF comes from
	 * /usr/lib/debug/.build-id/xx/yyyy.debug. */
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", bid, bid + 2);
	if (access(dbg, R_OK) == 0) {
		cr_assert(info.has_filenames, "debug info at %s not found", dbg);
		cr_assert(info.has_inline_frames);
		cr_assert_not_null(res.frames[0].file);
		cr_assert_gt(res.frames[0].line, 0);
	} else {
		cr_log_info("no %s: build-ID debug lookup not exercised", dbg);
	}
	free(bid);
}

/* KiB resident in this process's mappings whose smaps header line `is`
 * says are wanted; -1 when there is none. */
static long st_smaps_rss(bool (*is)(const char *head, const void *arg), const void *arg)
{
	char line[PATH_MAX + 256];
	long kb = -1, v;
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		const char *dash = strchr(line, '-'), *space = strchr(line, ' ');

		/* A mapping's header, "LO-HI perms ...", not a "Field: N kB" line. */
		if (dash && space && dash < space) {
			in = is(line, arg);
			if (in && kb < 0)
				kb = 0;
			continue;
		}
		if (in && sscanf(line, "Rss: %ld kB", &v) == 1)
			kb += v;
	}
	fclose(f);
	return kb;
}

struct st_file {
	const char *path;
	off_t size;
};

/* A whole-file mapping of the file: offset 0, as long as the file. */
static bool st_is_whole_file(const char *head, const void *arg)
{
	const struct st_file *sf = arg;
	unsigned long long lo = 0, hi = 0, off = 1;
	char name[PATH_MAX];

	name[0] = '\0';
	return sscanf(head, "%llx-%llx %*s %llx %*s %*s %4095s", &lo, &hi, &off, name) >= 3 &&
	       !off && !strcmp(name, sf->path) && hi - lo >= (unsigned long long)sf->size;
}

/* KiB resident in this process's whole-file mappings of path (libelf's and
 * libdwfl's, not ld.so's segments); -1 when there is none. */
static long st_whole_file_rss(const char *path)
{
	struct st_file sf = {path, 0};
	struct stat st;

	cr_assert_eq(stat(path, &st), 0);
	sf.size = st.st_size;
	return st_smaps_rss(st_is_whole_file, &sf);
}

/* An unlinked file under the scratch directory: "DIR/#INODE (deleted)". */
static bool st_is_scratch_copy(const char *head, const void *arg)
{
	const char *prefix = arg, *name = strchr(head, '/');

	return name && !strncmp(name, prefix, strlen(prefix)) && strstr(name, "(deleted)");
}

/* The resident KiB of the debug files' copies in the scratch directory
 * (scratch.h), or -1 for none. */
static long st_scratch_rss(void)
{
	char prefix[PATH_MAX];

	snprintf(prefix, sizeof(prefix), "%s/#", symbolizer__scratch_dir());
	return st_smaps_rss(st_is_scratch_copy, prefix);
}

/* Between profiles the pages libelf and libdwfl read out of mapped files
 * leave the daemon's RSS, and lookups after that still answer right. */
Test(symbolizer, release_pages_keeps_answers)
{
	static const char *const fns[] = {"getpid", "qsort", "strtol"};
	char path[PATH_MAX], dbg[PATH_MAX + 64], *bid;
	struct sym_object_key key[3];
	struct sym_result res;
	uint64_t off[3];
	bool with_dbg;

	/* libc's own, not a sanitizer's interceptors of the same names. */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

	cr_assert_not_null(libc);
	for (int i = 0; i < 3; i++) {
		void *fn = dlsym(libc, fns[i]);

		cr_assert_not_null(fn, "%s", fns[i]);
		key[i] = st_maps_key(fn, &off[i], path, sizeof(path));
	}
	bid = st_build_id(path);
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", bid, bid + 2);
	free(bid);
	with_dbg = access(dbg, R_OK) == 0;
	if (!with_dbg)
		cr_log_info("no %s: only libc's own file is released", dbg);
	/* Loading sorts libc's symbols and indexes its debug file's DWARF,
	 * reading page after page of both: those pages go (before, ~2 MiB of
	 * them stayed in RSS for as long as the object was cached). */
	for (int i = 0; i < 2; i++)
		cr_assert_eq(symbolizer__resolve(st_sym, &key[i], off[i], &res), 0);
	symbolizer__release_pages(st_sym);
	cr_assert_eq(st_whole_file_rss(path), 0, "libc's whole-file mapping: missing (-1) or resident");
	/* libc6-dbg's file is compressed: libdwfl maps its inflated copy,
	 * unless the scratch directory is in memory here. */
	if (with_dbg && st_whole_file_rss(dbg) < 0)
		cr_assert_eq(st_scratch_rss(), 0, "the copy: missing (-1) or resident");
	else if (with_dbg)
		cr_assert_eq(st_whole_file_rss(dbg), 0);
	/* A third address: read out of the files again, not the result cache. */
	cr_assert_eq(symbolizer__resolve(st_sym, &key[2], off[2], &res), 0);
	cr_assert_geq(res.nframes, 1);
	cr_assert_not_null(strstr(res.frames[res.nframes - 1].function, "strtol"), "%s",
			   res.frames[res.nframes - 1].function);
	if (with_dbg)
		cr_assert_not_null(res.frames[0].file);
	dlclose(libc);
}

Test(symbolizer, cxx_names_demangled)
{
	char path[PATH_MAX], *aliases;
	struct sym_object_key key;
	struct sym_result res;
	uint64_t off;
	void *lib, *fn;

	/* libstdc++ is loaded for a C++ function to symbolize, not for its
	 * demangler: the symbolizer has its own (libiberty's), as the daemon,
	 * which never loads libstdc++, needs.  This test once loaded it for
	 * __cxa_demangle and passed while the daemon left C++ names mangled. */
	lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		cr_skip_test("no libstdc++.so.6");
	cr_assert_null(dlsym(RTLD_DEFAULT, "__cxa_demangle"), "libstdc++ is global");
	fn = dlsym(lib, "_ZSt9terminatev");
	cr_assert_not_null(fn);
	key = st_maps_key(fn, &off, path, sizeof(path));
	cr_assert_eq(symbolizer__resolve(st_sym, &key, off, &res), 0);
	cr_assert_eq(res.nframes, 1);
	aliases = st_aliases(path, "-D -C --defined-only",
			     st_nm_addr(path, "-D --defined-only", "_ZSt9terminatev"));
	cr_assert_not_null(strstr(aliases, "|std::terminate()|"), "%s", aliases);
	cr_assert_str_eq(res.frames[0].function, "std::terminate()");
	cr_assert_str_eq(res.frames[0].system_name, "_ZSt9terminatev");
	free(aliases);
}

/* --- identity, sharing, errors --- */

Test(symbolizer, shared_by_identity)
{
	struct sym_object_key key = st_key(st_target), any = {.path = st_target};
	char link[PATH_MAX + 32];
	struct sym_result res;

	snprintf(link, sizeof(link), "%s/other-name", st_tmp);
	cr_assert_eq(symlink(st_target, link), 0);
	cr_assert_eq(symbolizer__resolve(st_sym, &key, 0, &res), 0);
	cr_assert_eq(symbolizer__resolve(st_sym, &any, 0, &res), 0);
	key.path = link;
	cr_assert_eq(symbolizer__resolve(st_sym, &key, 0, &res), 0);
	cr_assert_eq(symbolizer__cache_objects(st_sym), 1);
}

Test(symbolizer, stale_identity)
{
	struct sym_object_key key = st_key(st_target);
	struct sym_object_info info;
	struct sym_result res;

	key.ino++;
	cr_assert_eq(symbolizer__resolve(st_sym, &key, 0, &res), -ESTALE);
	cr_assert_eq(res.nframes, 0);
	key.ino--;
	key.dev++;
	cr_assert_eq(symbolizer__object_info(st_sym, &key, &info), -ESTALE);
	cr_assert_eq(symbolizer__cache_objects(st_sym), 0);
	key.dev--;
	cr_assert_eq(symbolizer__object_info(st_sym, &key, &info), 0);
}

/* No pointers in parameters: Criterion runs each case in a new process,
 * where this binary's data may sit at another address. */
struct st_bad {
	char what[32];
	long size; /* truncate a copy of inline_target to this; -1: special */
	int err;   /* expected; 0: any negative errno */
};

ParameterizedTestParameters(symbolizer, bad_input)
{
	static struct st_bad cases[] = {
	    {"missing", -1, -ENOENT},
	    {"directory", -1, -EISDIR},
	    {"text", -1, -ENOEXEC},
	    {"empty", 0, -ENOEXEC},
	    {"magic only", 4, -ENOEXEC},
	    {"header only", 64, -ENOEXEC},
	    {"first page", 4096, 0},
	    {"half", -2, 0},
	    {"all but the section headers", -3, 0},
	    /* Symbol names would be read past the table's end (fuzz_elf). */
	    {"string table without its NUL", -4, -ENOEXEC},
	};

	return cr_make_param_array(struct st_bad, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct st_bad *c, symbolizer, bad_input)
{
	char path[PATH_MAX + 32];
	struct sym_object_key key = {.path = path};
	struct sym_object_info info;
	struct sym_result res;
	struct stat st;
	long size = c->size;
	int err, i;

	snprintf(path, sizeof(path), "%s/bad", st_tmp);
	cr_assert_eq(stat(st_target, &st), 0);
	if (!strcmp(c->what, "directory")) {
		snprintf(path, sizeof(path), "%s", st_tmp);
	} else if (!strcmp(c->what, "text")) {
		snprintf(path, sizeof(path), "%s", st_source);
	} else if (size == -4) {
		free(st_must("cp '%1$s' '%2$s' && set -- $(readelf -SW '%1$s' | sed -n "
			     "'s/.*] \\.strtab *STRTAB *[0-9a-f]* \\([0-9a-f]*\\) \\([0-9a-f]*\\).*/\\1 \\2/p') && "
			     "printf ' ' | dd of='%2$s' bs=1 seek=$((0x$1 + 0x$2 - 1)) conv=notrunc "
			     "status=none && [ -n \"$2\" ]",
			     st_target, path));
	} else if (strcmp(c->what, "missing")) {
		char *out = st_must("readelf -hW '%s' | awk '/Start of section headers/ "
				    "{ print $5 }'",
				    st_target);

		if (size == -2)
			size = st.st_size / 2;
		else if (size == -3)
			size = atol(out);
		free(out);
		free(st_must("head -c %ld '%s' > '%s'", size, st_target, path));
	}
	/* Twice: a failure must be as clean the second time (cached or not). */
	for (i = 0; i < 2; i++) {
		err = symbolizer__object_info(st_sym, &key, &info);
		if (c->err)
			cr_assert_eq(err, c->err, "%s: %d", c->what, err);
		else
			cr_assert_lt(err, 0, "%s: %d", c->what, err);
		err = symbolizer__resolve(st_sym, &key, 0x1000, &res);
		cr_assert_lt(err, 0, "%s: %d", c->what, err);
		cr_assert_eq(res.nframes, 0);
	}
}

/*
 * A file only root can change is mapped; root can still rewrite it in
 * place while it is cached.  A read past its new end (SIGBUS) fails the
 * call with -EIO and drops the object, and the process lives on.
 */
Test(symbolizer, file_shrunk_under_its_mapping)
{
	char path[PATH_MAX + 32];
	struct sym_object_key key;
	struct sym_cfi row;
	uint64_t a = st_nm_addr(st_target, "", "run_workload"),
		 b = st_nm_addr(st_target, "", "main");
	int err;

	/* Emulated (qemu-user), the 100 ms window passes before the read. */
	if (getenv("CROSS_COMPILE"))
		cr_skip_test("under qemu-user the 100 ms window this test relies on passes");
	st_fmt(path, "%s/mapped", st_tmp);
	free(st_must("cp '%s' '%s' && chmod 0755 '%s'", st_target, path, path));
	key = st_key(path);
	cr_assert_eq(symbolizer__cfi(st_sym, &key, st_vaddr_to_offset(st_target, a), &row), 0);
	cr_assert_eq(symbolizer__cache_objects(st_sym), 1);
	/* In place: the same inode, now empty.  The next call comes well
	 * within the 100 ms in which the cache does not stat the file again,
	 * and reads the mapping. */
	cr_assert_eq(truncate(path, 0), 0);
	err = symbolizer__cfi(st_sym, &key, st_vaddr_to_offset(st_target, b), &row);
	cr_assert_eq(err, -EIO, "a read past the end of the shrunk file gave %d", err);
	cr_assert_eq(symbolizer__cache_objects(st_sym), 0);
	/* Opened again: now it is no ELF file at all. */
	cr_assert_eq(symbolizer__cfi(st_sym, &key, st_vaddr_to_offset(st_target, b), &row),
		     -ENOEXEC);
}

Test(symbolizer, bad_arguments)
{
	struct sym_object_key key = {.path = NULL};
	struct sym_object_info info;
	struct sym_result res;

	cr_assert_eq(symbolizer__resolve(st_sym, &key, 0, &res), -EINVAL);
	cr_assert_eq(symbolizer__object_info(st_sym, &key, &info), -EINVAL);
	symbolizer__free(NULL);
	cr_assert_eq(symbolizer__cache_objects(NULL), 0);
}

Test(symbolizer, offset_outside_segments)
{
	struct sym_object_key key = st_key(st_target);
	struct sym_result res;
	struct stat st;

	cr_assert_eq(stat(st_target, &st), 0);
	cr_assert_eq(symbolizer__resolve(st_sym, &key, st.st_size + 4096, &res), 0);
	cr_assert_eq(res.nframes, 0);
}

/* --- caching --- */

Test(symbolizer, eviction_keeps_answers_right)
{
	struct sym_object_key key = st_key(st_target), lkey;
	struct st_oracle hit;
	char lib[PATH_MAX + 32], *aliases;
	uint64_t off = 0, la;
	int round;

	hit = st_check_function(st_target, "hot_a", "hot_a-calls-mix");
	off = st_vaddr_to_offset(st_target, hit.addr);
	st_stripped_libc(lib, sizeof(lib));
	lkey = st_key(lib);
	la = st_nm_addr(lib, "-D --defined-only", "malloc");
	aliases = st_aliases(lib, "-D --defined-only", la);

	/* One byte, as set: every object evicts the one before, pinned or
	 * not (pinning never goes past the bound as set). */
	symbolizer__free(st_sym);
	st_sym = symbolizer__new(1);
	cr_assert_not_null(st_sym);
	for (round = 0; round < 2; round++) {
		struct sym_result res;

		cr_assert_eq(symbolizer__resolve(st_sym, &key, off, &res), 0);
		cr_assert_str_eq(res.frames[1].function, "hot_a");
		cr_assert_eq(symbolizer__cache_objects(st_sym), 1);
		cr_assert_eq(symbolizer__resolve(st_sym, &lkey, st_vaddr_to_offset(lib, la), &res),
			     0);
		st_assert_alias(aliases, res.frames[0].function);
		cr_assert_eq(symbolizer__cache_objects(st_sym), 1);
	}

	/* Shrunk to one byte under pressure, the bound as set 256 MiB: no
	 * object stays past a batch's end.  Within one (a profile), those it
	 * used stay, each opened once however often the lookups alternate
	 * between them: an LRU smaller than that set would reopen one at
	 * nearly every lookup. */
	symbolizer__set_limits(st_sym, 256 << 20, 0);
	symbolizer__shrink(st_sym, 0, 1);
	for (int batch = 0; batch < 2; batch++) {
		uint64_t loads = symbolizer__loads(st_sym);

		for (round = 0; round < 3; round++) {
			struct sym_result res;

			cr_assert_eq(symbolizer__resolve(st_sym, &key, off, &res), 0);
			cr_assert_eq(res.nframes, 2);
			cr_assert_str_eq(res.frames[0].function, "mix");
			cr_assert_str_eq(res.frames[1].function, "hot_a");
			cr_assert_eq(res.frames[1].line, hit.f[1].line);

			cr_assert_eq(symbolizer__resolve(st_sym, &lkey,
							 st_vaddr_to_offset(lib, la), &res),
				     0);
			cr_assert_eq(res.nframes, 1);
			st_assert_alias(aliases, res.frames[0].function);
			cr_assert_eq(symbolizer__cache_objects(st_sym), 2);
		}
		cr_assert_eq(symbolizer__loads(st_sym), loads + 2,
			     "batch %d: an object in use was evicted and reopened", batch);
		symbolizer__end_batch(st_sym);
		cr_assert_eq(symbolizer__cache_objects(st_sym), 0, "the bound held past the batch");
	}
	/* Bounded by objects too (each holds file descriptors): plenty of
	 * bytes, one object. */
	symbolizer__set_limits(st_sym, 256 << 20, 1);
	cr_assert_eq(symbolizer__max_objects(st_sym), 1);
	for (round = 0; round < 2; round++) {
		struct sym_result res;

		cr_assert_eq(symbolizer__resolve(st_sym, &key, off, &res), 0);
		cr_assert_str_eq(res.frames[1].function, "hot_a");
		cr_assert_eq(symbolizer__resolve(st_sym, &lkey, st_vaddr_to_offset(lib, la), &res),
			     0);
		st_assert_alias(aliases, res.frames[0].function);
		cr_assert_eq(symbolizer__cache_objects(st_sym), 1);
	}
	symbolizer__set_limits(st_sym, 0, 0);
	cr_assert_eq(symbolizer__max_objects(st_sym), SYMBOLIZER_DEFAULT_MAX_OBJECTS);
	free(aliases);
}

/* Memory pressure (profile/memgov.c): coarse mode answers from the symbol
 * table, and going back brings the lines and inlined frames back. */
Test(symbolizer, coarse_mode_and_shrink)
{
	struct sym_object_key key = st_key(st_target);
	struct st_oracle hit = st_check_function(st_target, "hot_a", "hot_a-calls-mix");
	uint64_t off = st_vaddr_to_offset(st_target, hit.addr);
	struct sym_object_info info;
	struct sym_result res;
	uint64_t loads;

	cr_assert_eq(symbolizer__resolve(st_sym, &key, off, &res), 0);
	cr_assert_eq(res.nframes, 2);
	cr_assert_gt(symbolizer__cache_objects(st_sym), 0);

	symbolizer__set_coarse(st_sym, true);
	cr_assert(symbolizer__coarse(st_sym));
	cr_assert_eq(symbolizer__cache_objects(st_sym), 0, "the object with DWARF stayed");
	cr_assert_eq(symbolizer__resolve(st_sym, &key, off, &res), 0);
	cr_assert_eq(res.nframes, 1);
	cr_assert_str_eq(res.frames[0].function, "hot_a");	/* the physical function */
	cr_assert_null(res.frames[0].file);
	cr_assert_eq(res.frames[0].line, 0);
	cr_assert_eq(symbolizer__object_info(st_sym, &key, &info), 0);
	cr_assert(info.has_functions);
	cr_assert_not(info.has_line_numbers, "coarse mode loaded DWARF");

	symbolizer__set_coarse(st_sym, false);
	cr_assert_eq(symbolizer__resolve(st_sym, &key, off, &res), 0);
	cr_assert_eq(res.nframes, 2, "a symbol-only answer outlived coarse mode");
	cr_assert_str_eq(res.frames[0].function, "mix");
	cr_assert_eq(res.frames[1].line, hit.f[1].line);

	/* Shrinking to 0% evicts everything; the bound comes back with
	 * set_limits. */
	cr_assert_gt(symbolizer__shrink(st_sym, 0, 0), 0);
	cr_assert_eq(symbolizer__cache_objects(st_sym), 0);
	symbolizer__set_limits(st_sym, 0, 0);
	loads = symbolizer__loads(st_sym);
	cr_assert_eq(symbolizer__resolve(st_sym, &key, off, &res), 0);
	cr_assert_eq(symbolizer__cache_objects(st_sym), 1);
	cr_assert_eq(symbolizer__loads(st_sym), loads + 1);

	/* A floor above what it holds keeps everything, and repeated shrinks
	 * stop there: the object is not opened again. */
	cr_assert_eq(symbolizer__shrink(st_sym, 0, SIZE_MAX), 0);
	cr_assert_eq(symbolizer__shrink(st_sym, 50, SIZE_MAX), 0);
	cr_assert_eq(symbolizer__resolve(st_sym, &key, off, &res), 0);
	cr_assert_eq(symbolizer__cache_objects(st_sym), 1);
	cr_assert_eq(symbolizer__loads(st_sym), loads + 1, "a shrink to its floor reloaded");
}

Test(symbolizer, result_cache_bounded_and_fast)
{
	struct sym_object_key key = st_key(st_target);
	struct st_oracle hit = st_check_function(st_target, "hot_a", "hot_a-calls-mix");
	uint64_t off = st_vaddr_to_offset(st_target, hit.addr), i;
	struct sym_result res, first;
	struct timespec t0, t1;
	size_t bytes;
	double secs;
	struct stat st;

	cr_assert_eq(symbolizer__resolve(st_sym, &key, off, &first), 0);
	bytes = symbolizer__cache_bytes(st_sym);
	/* Many distinct offsets: the per-object result cache must stop
	 * growing (16k results of at most a few frames). */
	cr_assert_eq(stat(st_target, &st), 0);
	for (i = 0; i < 200000; i++)
		cr_assert_eq(symbolizer__resolve(st_sym, &key, i % (uint64_t)st.st_size, &res), 0);
	cr_assert_lt(symbolizer__cache_bytes(st_sym), bytes + (4 << 20), "%zu -> %zu", bytes,
		     symbolizer__cache_bytes(st_sym));

	/* Repeated lookups are cache hits: same strings, and quick. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 200000; i++)
		symbolizer__resolve(st_sym, &key, off, &res);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	cr_assert_eq(res.nframes, 2);
	cr_assert_str_eq(res.frames[0].function, "mix");
	cr_assert_eq(res.frames[0].line, first.frames[0].line);
	cr_assert_lt(secs, 2.0, "200k cached lookups took %.3f s", secs);
	cr_log_info("cached lookup: %.0f ns", secs / 200000 * 1e9);
}

/* --- CFI: where the return address is --- */

/* The last column of a readelf -wF row: the return address rule. */
static void st_last_word(char *line, char *out, size_t size)
{
	char *end = line + strlen(line), *w;

	while (end > line && end[-1] == ' ')
		*--end = '\0';
	w = strrchr(line, ' ');
	snprintf(out, size, "%s", w ? w + 1 : line);
}

/*
 * readelf -wF's answer for addr: the CFA rule "rsp+N" and the return address
 * at "c-M" give N - M; any other CFA (rbp-based) gives -ENOENT, as the
 * header promises.  An FDE starts from its CIE's initial row, and one with
 * no instructions of its own prints no rows at all.
 */
static int st_cfi_oracle(const char *bin, uint64_t addr)
{
	struct {
		unsigned long off;
		char cfa[64], ra[64];
	} cies[64];
	char *out = st_must("readelf -wF '%s'", bin), *line, *save = NULL;
	char cfa[64] = "", ra[64] = "", word[64];
	int ncies = 0, i, in = 0; /* 1: in a CIE, 2: in the FDE covering addr */
	int expect = -ENOENT;

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long lo, hi, loc;
		unsigned long off, cie;
		char *p;

		if (strstr(line, " CIE") && sscanf(line, "%lx", &off) == 1) {
			cr_assert_lt(ncies, 64);
			cies[ncies].off = off;
			cies[ncies].cfa[0] = cies[ncies].ra[0] = '\0';
			ncies++;
			in = 1;
			continue;
		}
		p = strstr(line, " FDE ");
		if (p) {
			in = 0;
			if (sscanf(p, " FDE cie=%lx pc=%llx..%llx", &cie, &lo, &hi) != 3 ||
			    addr < lo || addr >= hi)
				continue;
			in = 2;
			for (i = 0; i < ncies; i++)
				if (cies[i].off == cie) {
					snprintf(cfa, sizeof(cfa), "%s", cies[i].cfa);
					snprintf(ra, sizeof(ra), "%s", cies[i].ra);
				}
			continue;
		}
		if (!in || sscanf(line, "%llx %63s", &loc, word) != 2)
			continue;
		if (in == 1) {
			snprintf(cies[ncies - 1].cfa, sizeof(cies[0].cfa), "%s", word);
			st_last_word(line, cies[ncies - 1].ra, sizeof(cies[0].ra));
		} else if (loc <= addr) {
			snprintf(cfa, sizeof(cfa), "%s", word);
			st_last_word(line, ra, sizeof(ra));
		}
	}
	free(out);
	if (!strncmp(cfa, "rsp+", 4) && !strncmp(ra, "c-", 2))
		expect = atoi(cfa + 4) - atoi(ra + 2);
	return expect;
}

/* The return address's offset from SP by the CFI row, when the row is
 * SP-based; -ENOENT when it is FP-based or there is none. */
static int st_ret_offset(const struct sym_object_key *key, uint64_t off, int *sp_offset)
{
	struct sym_cfi row;
	int err = symbolizer__cfi(st_sym, key, off, &row);

	if (err)
		return err;
	if (row.cfa != SYM_CFA_SP || row.ra != SYM_REG_AT)
		return -ENOENT;
	*sp_offset = row.cfa_off + row.ra_off;
	return 0;
}

static void st_check_cfi(const char *bin, const char *fn, int *nsp, int *nfp)
{
	struct sym_object_key key = st_key(bin);
	uint64_t addrs[512];
	int n = st_insns(bin, fn, addrs, 512), i;

	for (i = 0; i < n; i++) {
		int want = st_cfi_oracle(bin, addrs[i]), got = -1, err;

		err = st_ret_offset(&key, st_vaddr_to_offset(bin, addrs[i]), &got);
		if (want == -ENOENT) {
			cr_assert_eq(err, -ENOENT, "%s %#" PRIx64 ": %d (%d)", fn, addrs[i], err,
				     got);
			(*nfp)++;
		} else {
			cr_assert_eq(err, 0, "%s %#" PRIx64 ": %d", fn, addrs[i], err);
			cr_assert_eq(got, want, "%s %#" PRIx64 ": %d, readelf %d", fn, addrs[i],
				     got, want);
			(*nsp)++;
		}
	}
}

Test(symbolizer, cfi_return_address_offset)
{
	struct sym_object_key key = st_key(st_target);
	uint64_t a = st_nm_addr(st_target, "", "run_workload");
	int nsp = 0, nfp = 0, off = -1;

#ifndef __x86_64__
	cr_skip_test("the readelf oracle here reads x86-64 register names");
#endif
	/* Function entry: the return address is what SP points at. */
	cr_assert_eq(st_ret_offset(&key, st_vaddr_to_offset(st_target, a), &off),
		     0);
	cr_assert_eq(off, 0);
	st_check_cfi(st_target, "hot_a", &nsp, &nfp);
	st_check_cfi(st_target, "run_workload", &nsp, &nfp);
	/* Both kinds of rows were compared: SP-based and FP-based. */
	cr_assert_gt(nsp, 2);
	cr_assert_gt(nfp, 2);
	cr_assert_eq(st_ret_offset(&key, 1ull << 40, &off), -ENOENT);
}

Test(symbolizer, cfi_in_stripped_library)
{
	char bin[PATH_MAX + 32];
	struct sym_object_key key;
	uint64_t a;
	int off = -1;

#ifndef __x86_64__
	cr_skip_test("x86-64 only");
#endif
	/* .eh_frame survives stripping: the sampler needs it most there. */
	st_stripped_libc(bin, sizeof(bin));
	key = st_key(bin);
	a = st_nm_addr(bin, "-D --defined-only", "getpid");
	cr_assert_eq(st_ret_offset(&key, st_vaddr_to_offset(bin, a), &off), 0);
	cr_assert_eq(off, st_cfi_oracle(bin, a));
	cr_assert_eq(off, 0);
}

/* --- kernel --- */

/* Text symbols at the address of name in /proc/kallsyms, as "|a||b|". */
static uint64_t st_kallsyms(const char *name, char **aliases)
{
	char *out = st_must("awk '$3 == \"%s\" && $2 ~ /^[tTwW]$/ { print $1; exit }' "
			    "/proc/kallsyms",
			    name);
	uint64_t addr = strtoull(out, NULL, 16);

	free(out);
	if (!addr)
		return 0;
	*aliases = st_must("awk '$1 == \"%016" PRIx64 "\" && $2 ~ /^[tTwW]$/ { "
			   "n = $3; if (NF > 3) n = n \" \" $4; print \"|\" n \"|\" }' "
			   "/proc/kallsyms",
			   addr);
	return addr;
}

Test(symbolizer, kernel_symbols)
{
	static const char *const names[] = {"schedule", "do_sys_openat2"};
	struct sym_result res;
	uint64_t start, limit, stext, etext;
	char *aliases;
	size_t i;
	int d;

	stext = st_kallsyms("_stext", &aliases);
	if (!stext)
		cr_skip_test("kernel addresses hidden (kptr_restrict)");
	free(aliases);
	etext = st_kallsyms("_etext", &aliases);
	free(aliases);
	cr_assert_eq(symbolizer__kernel_range(st_sym, &start, &limit), 0);
	cr_assert_eq(start, stext);
	cr_assert_eq(limit, etext);

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t a = st_kallsyms(names[i], &aliases);

		if (!a) {
			cr_log_info("no %s in kallsyms", names[i]);
			continue;
		}
		for (d = 0; d < 2; d++) {
			cr_assert_eq(symbolizer__resolve_kernel(st_sym, a + d, &res), 0);
			cr_assert_eq(res.nframes, 1);
			st_assert_alias(aliases, res.frames[0].function);
			/* The one a person expects when it's unique. */
			if (st_count_lines(aliases) == 1)
				cr_assert_str_eq(res.frames[0].function, names[i]);
		}
		free(aliases);
	}
	cr_assert_eq(symbolizer__resolve_kernel(st_sym, 16, &res), 0);
	cr_assert_eq(res.nframes, 0);
}

/* The parser on a file of known content, whatever this kernel allows. */
Test(symbolizer, kallsyms_parser)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81000000 T _text\n"
				   "ffffffff81000000 t __alias_of_start\n"
				   "ffffffff81000100 t helper\n"
				   "ffffffff81000100 T helper_global\n"
				   "ffffffff81000200 D some_data\n"
				   "ffffffff81000300 W weak_fn\n"
				   "ffffffff81001000 T _etext\n"
				   "ffffffff82000000 d more_data\n"
				   "ffffffffc0200000 t mod_fn\t[mymod]\n"
				   "garbage line\n"
				   "ffffffffc0200100 T mod_fn2\t[mymod]\n";
	char path[PATH_MAX + 32];
	struct ksyms *k = NULL;
	uint64_t start, limit;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kallsyms", st_tmp);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	cr_assert_eq(ksyms__load(path, &k), 0);
	ksyms__range(k, &start, &limit);
	cr_assert_eq(start, 0xffffffff81000000ULL);
	cr_assert_eq(limit, 0xffffffff81001000ULL);
	cr_assert_str_eq(ksyms__find(k, 0xffffffff81000000ULL), "_stext");
	cr_assert_str_eq(ksyms__find(k, 0xffffffff810000ffULL), "_stext");
	cr_assert_str_eq(ksyms__find(k, 0xffffffff81000100ULL), "helper_global");
	/* Data symbols are not text: the text symbol below still covers. */
	cr_assert_str_eq(ksyms__find(k, 0xffffffff81000250ULL), "helper_global");
	cr_assert_str_eq(ksyms__find(k, 0xffffffff81000301ULL), "weak_fn");
	cr_assert_str_eq(ksyms__find(k, 0xffffffff81000fffULL), "weak_fn");
	/* From _etext on, before any module: unknown. */
	cr_assert_null(ksyms__find(k, 0xffffffff81001000ULL));
	cr_assert_null(ksyms__find(k, 0xffffffff81001001ULL));
	cr_assert_null(ksyms__find(k, 0xffffffff80000000ULL));
	cr_assert_str_eq(ksyms__find(k, 0xffffffffc0200004ULL), "mod_fn [mymod]");
	cr_assert_str_eq(ksyms__find(k, 0xffffffffc0200104ULL), "mod_fn2 [mymod]");
	cr_assert_gt(ksyms__bytes(k), 0);
	ksyms__free(k);

	/* What an unprivileged reader sees. */
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("0000000000000000 T _stext\n0000000000000000 t helper\n", f);
	fclose(f);
	k = (struct ksyms *)1;
	cr_assert_eq(ksyms__load(path, &k), -EPERM);
	cr_assert_null(k);
	cr_assert_eq(ksyms__load("/nonexistent/kallsyms", &k), -ENOENT);
	ksyms__free(NULL);
}

/* Symbols are kept with 32 bits of address from their span's base.  An
 * arm64 kernel's layout with the JIT on (Debian 12's 6.1 in qemu): BPF
 * programs in vmalloc space terabytes below the image, modules ~1.6 GiB
 * below it.  Every one is named, and a module's symbol does not claim the
 * core text above it. */
Test(symbolizer, kallsyms_spans)
{
	static const char text[] = "ffff80000a2c1000 t bpf_prog_6deef7357e7b4530_profd_cpu\t[bpf]\n"
				   "ffffc3f8c6d68000 t p9_client_rpc\t[9pnet]\n"
				   "ffffc3f8c6d70000 t v9fs_file_open\t[9p]\n"
				   "ffffc3f92c010000 T _stext\n"
				   "ffffc3f92c010100 t helper\n"
				   "ffffc3f92cd00000 T _etext\n"
				   "0000000000001000 t far_below\n";
	/* NULL: unnamed. */
	static const struct {
		uint64_t addr;
		const char *name;
	} want[] = {
		{0xfff, NULL},
		{0x1001, "far_below"},
		{0xffff80000a2c1040ULL, "bpf_prog_6deef7357e7b4530_profd_cpu [bpf]"},
		{0xffffc3f8c6d68ec8ULL, "p9_client_rpc [9pnet]"},
		{0xffffc3f8c6d70564ULL, "v9fs_file_open [9p]"},
		/* Between the modules and the image: the last module's symbol
		 * (their ends are unknown), then the image's own. */
		{0xffffc3f92c00ffffULL, "v9fs_file_open [9p]"},
		{0xffffc3f92c010104ULL, "helper"},
		{0xffffc3f92cd00000ULL, NULL},
		{0xffffffffffffff00ULL, NULL},
	};
	char path[PATH_MAX + 32];
	struct ksyms *k = NULL;
	uint64_t start, limit;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kallsyms-spans", st_tmp);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	cr_assert_eq(ksyms__load(path, &k), 0);
	ksyms__range(k, &start, &limit);
	cr_assert_eq(start, 0xffffc3f92c010000ULL);
	cr_assert_eq(limit, 0xffffc3f92cd00000ULL);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *got = ksyms__find(k, want[i].addr);

		if (want[i].name)
			cr_assert(got && !strcmp(got, want[i].name), "%#" PRIx64 ": %s, not %s",
				  want[i].addr, got ? got : "(none)", want[i].name);
		else
			cr_assert_null(got, "%#" PRIx64 ": %s, not unnamed", want[i].addr, got);
	}
	/* 8 bytes a symbol, 16 a span, and the names. */
	cr_assert_leq(ksyms__bytes(k), 400);
	ksyms__free(k);
}

/* --- the vDSO --- */

/* The vDSO has no file: "[vdso]" is symbolized from the daemon's own copy
 * of it (every 64-bit process on a kernel maps the same one), and its CFI
 * is there to unwind through clock_gettime. */
Test(symbolizer, vdso_by_its_image)
{
	const unsigned char *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	char path[PATH_MAX], img[PATH_MAX + 32], *out;
	struct sym_object_key key;
	struct sym_result res;
	struct sym_cfi row;
	uint64_t off, sym;
	FILE *f;

	if (!eh && getenv("CROSS_COMPILE"))
		cr_skip_test("no vDSO under qemu-user 7.2");
	cr_assert_not_null(eh);
	key = st_maps_key(eh, &off, path, sizeof(path));
	cr_assert_str_eq(path, "[vdso]");
	/* The image's own symbol table, through binutils, as the oracle. */
	snprintf(img, sizeof(img), "%s/vdso.so", st_tmp);
	f = fopen(img, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(eh, 1, 8192, f), 8192);
	fclose(f);
	out = st_must("nm -D --defined-only '%s' | awk '$3 ~ /^__vdso_clock_gettime(@|$)/ { print $1 }'",
		      img);
	sym = strtoull(out, NULL, 16);
	free(out);
	cr_assert_gt(sym, 0);
	key.pid = getpid();
	cr_assert_eq(symbolizer__resolve(st_sym, &key, sym + 4, &res), 0);
	cr_assert_gt(res.nframes, 0);
	cr_assert_not_null(res.frames[res.nframes - 1].function);
	cr_assert(strstr(res.frames[res.nframes - 1].function, "clock_gettime"), "%s",
		  res.frames[res.nframes - 1].function);
	cr_assert_eq(symbolizer__cfi(st_sym, &key, sym, &row), 0);
	cr_assert_eq(row.cfa, SYM_CFA_SP);
	cr_assert_eq(row.cfa_off, 8);
}
