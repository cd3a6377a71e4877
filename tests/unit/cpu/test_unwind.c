// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwinder on recorded samples, with no BPF: a sample of
 * build/tests/nofp_target (main -> outer_fn -> middle_fn -> inner_fn, all
 * built with -fomit-frame-pointer, each with a kilobyte of locals) is
 * recorded the way the kernel side records one (the user registers, a
 * copy of the stack from sp, the frame-pointer walk, which finds nothing
 * here) by stopping the process with ptrace in inner_fn.  Its memory maps
 * are taken into a process table then, and the process is gone before
 * anything is unwound: the sample is replayed, whole and cut short, as
 * plain registers and bytes (struct unwind_sample).
 *
 * Paths: $BUILD (absolute build dir) as tests/run.sh sets it, else derived
 * from /proc/self/exe, which is build/tests/unit_cpu.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpu/unwind.h"
#include "proc/procs.h"
#include "symbolizer/symbolizer.h"

#define STACK_MAX (64 << 10)
#define FRAMES_MAX 64

/* One recorded sample and what replaying it needs. */
static struct {
	pid_t pid;
	uint64_t ip, sp, bp, bx;
	uint8_t stack[STACK_MAX];
	uint64_t stack_len;
	struct procs *procs;
	struct symbolizer *sym;
	struct unwind *u;
	bool no_ptrace;		/* under an emulator: the recorded tests skip */
} rec;

#define NEED_PTRACE()                                                                  \
	do {                                                                           \
		if (rec.no_ptrace)                                                     \
			cr_skip_test("no ptrace here (qemu-user): see test_unwind_self.c"); \
	} while (0)

static void target_path(char *out, size_t size)
{
	const char *b = getenv("BUILD");
	char exe[PATH_MAX], up[PATH_MAX];
	ssize_t n;

	if (b && *b) {
		snprintf(out, size, "%s/tests/nofp_target", b);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(n, 0);
	exe[n] = '\0';
	snprintf(up, sizeof(up), "%s/..", dirname(exe));
	cr_assert_not_null(realpath(up, out));
	strncat(out, "/tests/nofp_target", size - strlen(out) - 1);
}

/* The function (symbol) at address addr of the recorded process. */
static const char *function_at(uint64_t addr)
{
	static struct sym_result res;
	const struct proc_map *m;
	struct sym_object_key key;

	m = proc_maps__find(procs__maps(rec.procs, rec.pid, PROCS_SEQ_LATEST), addr);
	if (!m)
		return "?";
	key = (struct sym_object_key){m->path, m->dev, m->ino, 0, m->start, m->end};
	if (symbolizer__resolve(rec.sym, &key, addr - m->start + m->offset, &res) ||
	    res.nframes < 1 || !res.frames[res.nframes - 1].function)
		return "?";
	return res.frames[res.nframes - 1].function;
}

/* Stop the target, take its registers and stack: 0, or -EAGAIN when it
 * was not in inner_fn (let it run and try again). */
static int record_once(void)
{
	struct user_regs_struct regs;
	struct iovec io = {&regs, sizeof(regs)};
	int status;

	cr_assert_eq(ptrace(PTRACE_INTERRUPT, rec.pid, 0, 0), 0, "PTRACE_INTERRUPT: %m");
	cr_assert_eq(waitpid(rec.pid, &status, 0), rec.pid);
	cr_assert(WIFSTOPPED(status));
	cr_assert_eq(ptrace(PTRACE_GETREGSET, rec.pid, NT_PRSTATUS, &io), 0,
		     "PTRACE_GETREGSET: %m");
	/* What the kernel side's sample carries (bpf/arch/): pc, sp, the
	 * frame pointer and one more (rbx; arm64's link register). */
#if defined(__x86_64__)
	rec.ip = regs.rip;
	rec.sp = regs.rsp;
	rec.bp = regs.rbp;
	rec.bx = regs.rbx;
#elif defined(__aarch64__)
	rec.ip = regs.pc;
	rec.sp = regs.sp;
	rec.bp = regs.regs[29];
	rec.bx = regs.regs[30];
#endif
	if (strcmp(function_at(rec.ip), "inner_fn")) {
		cr_assert_eq(ptrace(PTRACE_CONT, rec.pid, 0, 0), 0);
		return -EAGAIN;
	}
	/* As the kernel side copies it: from sp up, as far as the stack goes. */
	rec.stack_len = 0;
	while (rec.stack_len < STACK_MAX) {
		struct iovec local = {rec.stack + rec.stack_len, 4096};
		struct iovec remote = {(void *)(uintptr_t)(rec.sp + rec.stack_len), 4096};

		if (process_vm_readv(rec.pid, &local, 1, &remote, 1, 0) != 4096)
			break;
		rec.stack_len += 4096;
	}
	cr_assert_gt(rec.stack_len, 3 << 10, "only %lu bytes of stack", rec.stack_len);
	return 0;
}

static void record_setup(void)
{
	char path[PATH_MAX];
	struct timespec pause = {0, 20 * 1000 * 1000};
	int status, tries = 0;

	target_path(path, sizeof(path));
	cr_assert_eq(access(path, X_OK), 0, "no %s (make it first)", path);
	rec.procs = procs__new(16);
	rec.sym = symbolizer__new(SYMBOLIZER_DEFAULT_MAX_BYTES);
	rec.u = unwind__new(rec.sym, false);
	cr_assert(rec.procs && rec.sym && rec.u);
	rec.pid = fork();
	cr_assert_geq(rec.pid, 0);
	if (rec.pid == 0) {
		execl(path, path, "30", (char *)NULL);
		_exit(127);
	}
	nanosleep(&pause, NULL);	/* past ld.so, into its loop */
	if (ptrace(PTRACE_SEIZE, rec.pid, 0, 0)) {
		cr_assert_eq(errno, ENOSYS, "PTRACE_SEIZE: %m");
		/* qemu-user (the arm64 unit tests on x86-64) has no ptrace:
		 * test_unwind_self.c unwinds a process that records itself. */
		rec.no_ptrace = true;
		kill(rec.pid, SIGKILL);
		waitpid(rec.pid, &status, 0);
		return;
	}
	cr_assert_eq(procs__snapshot(rec.procs, rec.pid, 0, NULL, PROCS_SEQ_LATEST), 0);
	while (record_once() == -EAGAIN) {
		cr_assert_lt(++tries, 200, "never caught nofp_target in inner_fn");
		nanosleep(&pause, NULL);
	}
	/* The process goes: what is left is the recording. */
	kill(rec.pid, SIGKILL);
	waitpid(rec.pid, &status, 0);
}

static void record_teardown(void)
{
	unwind__free(rec.u);
	symbolizer__free(rec.sym);
	procs__free(rec.procs);
}

static struct unwind_sample recorded(uint64_t stack_len)
{
	return (struct unwind_sample){
		.pid = rec.pid,
		.exec_seq = PROCS_SEQ_LATEST,
		.ip = rec.ip,
		.sp = rec.sp,
		.bp = rec.bp,
		.bx = rec.bx,
		.regs = true,
		/* The kernel side's walk: rbp is no frame pointer here, so it
		 * has the sampled ip and nothing else. */
		.fp = &rec.ip,
		.nfp = 1,
		.stack = rec.stack,
		.stack_len = stack_len,
	};
}

TestSuite(unwind, .init = record_setup, .fini = record_teardown, .timeout = 60);

Test(unwind, recorded_sample_unwinds_by_cfi_to_the_outermost_frame)
{
	static const char *const want[] = {"inner_fn", "middle_fn", "outer_fn", "main"};
	struct unwind_sample s = recorded(rec.stack_len);
	struct unwind_result res;
	uint64_t out[FRAMES_MAX];
	size_t n;

	NEED_PTRACE();
	n = unwind__frames(rec.u, rec.procs, &s, out, FRAMES_MAX, &res);
	cr_assert_geq(n, 4, "%zu frames (stopped: %s)", n, res.stop ? res.stop : "-");
	for (size_t i = 0; i < 4; i++)
		cr_expect_str_eq(function_at(i ? out[i] - 1 : out[i]), want[i], "frame %zu", i);
	cr_expect_eq(out[0], rec.ip);
	cr_expect(res.complete, "stopped: %s", res.stop ? res.stop : "-");
	cr_expect_not(res.need_more);
}

Test(unwind, complete_sample_says_how_much_of_its_copy_it_read)
{
	struct unwind_sample s = recorded(rec.stack_len);
	struct unwind_result res, again;
	uint64_t out[FRAMES_MAX], out2[FRAMES_MAX];
	size_t n, n2;

	NEED_PTRACE();
	n = unwind__frames(rec.u, rec.procs, &s, out, FRAMES_MAX, &res);
	cr_assert(res.complete, "stopped: %s", res.stop ? res.stop : "-");
	/* main -> outer_fn -> middle_fn: two kilobytes of locals at least. */
	cr_expect_gt(res.used, 2048, "used %lu", res.used);
	cr_expect_lt(res.used, rec.stack_len, "used %lu of %lu", res.used, rec.stack_len);
	cr_expect_eq(res.used % 8, 0);

	/* A copy of just that much unwinds the same frames, complete
	 * (stackcopy fits a copy to it)... */
	s = recorded(res.used);
	n2 = unwind__frames(rec.u, rec.procs, &s, out2, FRAMES_MAX, &again);
	cr_expect(again.complete, "stopped: %s", again.stop ? again.stop : "-");
	cr_assert_eq(n2, n);
	cr_expect_arr_eq(out2, out, n * sizeof(*out));
	cr_expect_eq(again.used, res.used);

	/* ...and a word less does not, and says so. */
	s = recorded(res.used - 8);
	unwind__frames(rec.u, rec.procs, &s, out2, FRAMES_MAX, &again);
	cr_expect_not(again.complete);
	cr_expect(again.need_more);
	cr_expect_eq(again.used, 0);
}

Test(unwind, recorded_sample_cut_short_asks_for_more_stack)
{
	struct unwind_sample s = recorded(256);
	struct unwind_result res;
	uint64_t out[FRAMES_MAX];
	size_t n;

	NEED_PTRACE();
	/* inner_fn's frame is a few pushes; middle_fn's holds a kilobyte of
	 * locals, so where middle_fn returns to is beyond 256 bytes. */
	n = unwind__frames(rec.u, rec.procs, &s, out, FRAMES_MAX, &res);
	cr_assert_eq(n, 2, "%zu frames, stopped: %s", n, res.stop ? res.stop : "-");
	cr_expect_str_eq(function_at(out[1] - 1), "middle_fn");
	cr_expect_not(res.complete);
	cr_expect(res.need_more);
	cr_expect_str_eq(res.stop, "copied stack ended");
	cr_expect_gt(res.want, 1024, "want %lu bytes", res.want);
	cr_expect_leq(res.want, rec.stack_len, "want %lu of %lu bytes", res.want, rec.stack_len);

	/* What it asked for gets it past middle_fn. */
	s = recorded(res.want);
	n = unwind__frames(rec.u, rec.procs, &s, out, FRAMES_MAX, &res);
	cr_assert_geq(n, 3, "%zu frames, stopped: %s", n, res.stop ? res.stop : "-");
	cr_expect_str_eq(function_at(out[2] - 1), "outer_fn");
}

Test(unwind, without_registers_the_frame_pointer_walk_stands)
{
	uint64_t walk[3] = {rec.ip, 0x1000, 0x2000}, out[FRAMES_MAX];
	struct unwind_sample s = recorded(rec.stack_len);
	struct unwind_result res;
	size_t n;

	NEED_PTRACE();
	s.regs = false;
	s.fp = walk;
	s.nfp = 3;
	s.fp_clean = true;
	n = unwind__frames(rec.u, rec.procs, &s, out, FRAMES_MAX, &res);
	cr_assert_eq(n, 3);
	cr_expect_arr_eq(out, walk, sizeof(walk));
	cr_expect(res.complete);

	/* max bounds it, and a walk cut by max is not complete. */
	n = unwind__frames(rec.u, rec.procs, &s, out, 2, &res);
	cr_expect_eq(n, 2);
	cr_expect_not(res.complete);
}

Test(unwind, counts_what_it_did)
{
	struct unwind_sample s = recorded(rec.stack_len);
	struct unwind_result res;
	struct unwind_stats st;
	uint64_t out[FRAMES_MAX];

	NEED_PTRACE();
	unwind__frames(rec.u, rec.procs, &s, out, FRAMES_MAX, &res);
	unwind__stats(rec.u, &st);
	cr_expect_eq(st.samples, 1);
	cr_expect_eq(st.incomplete, 0);
	cr_expect_geq(st.cfi_frames, 4);
	cr_expect_eq(st.fp_frames, 0);
}
