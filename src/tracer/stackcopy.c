// SPDX-License-Identifier: BSD-2-Clause
/*
 * stackcopy: how much user stack each executable's samples copy (learned; the sole writer of
 * proc_copy, driven by bpfobj's exec events) (the contract: stackcopy.h).
 */
#include <bpf/bpf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/abi/cpu.h"
#include "lib/log.h"
#include "proc/procs.h"
#include "tracer/stackcopy.h"
#include "tracer/tgidbits.h"

struct exe_need {
	uint64_t dev, ino;
	uint32_t bytes;		/* with PROFD_COPY_TO_FP while no need went past it */
	/* What complete samples read of their copies since the last raise
	 * (stackcopy__used), until the copy is fitted to it, once. */
	uint32_t used_max, used_n;
	bool fitted;
};

struct stackcopy {
	int map_fd;
	struct tgidbits *bits;
	struct procs *procs;
	uint32_t max_bytes;
	struct exe_need exes[STACKCOPY_MAX_EXES];
	size_t nexes;
	size_t unfitted;	/* exes not fitted yet: nothing to do while 0 */
	struct stackcopy_stats st;
};

struct stackcopy *stackcopy__new(int map_fd, struct tgidbits *bits, struct procs *procs,
				 uint32_t max_bytes)
{
	struct stackcopy *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return NULL;
	sc->map_fd = map_fd;
	sc->bits = bits;
	sc->procs = procs;
	sc->max_bytes = max_bytes;
	return sc;
}

void stackcopy__free(struct stackcopy *sc)
{
	free(sc);
}

static struct exe_need *find(struct stackcopy *sc, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < sc->nexes; i++)
		if (sc->exes[i].dev == dev && sc->exes[i].ino == ino)
			return &sc->exes[i];
	return NULL;
}

/* Is a the same or a larger copy than b? */
static bool covers(uint32_t a, uint32_t b)
{
	return (a & ~PROFD_COPY_TO_FP) >= (b & ~PROFD_COPY_TO_FP) &&
	       (!(a & PROFD_COPY_TO_FP) || (b & PROFD_COPY_TO_FP));
}

/* exact: bytes even where the entry is larger (a copy fitted down). */
static void set_pid(struct stackcopy *sc, int pid, uint32_t bytes, bool exact)
{
	__u32 key = pid, cur = 0;

	/* First, and even when the entry is there: one a dead process left
	 * has no bit, and the kernel side would not see it (tgidbits.h). */
	tgidbits__set(sc->bits, PROFD_TGID_COPY, pid);
	if (bpf_map_lookup_elem(sc->map_fd, &key, &cur) == 0 &&
	    (exact ? cur == bytes : covers(cur, bytes)))
		return;
	if (bpf_map_update_elem(sc->map_fd, &key, &bytes, BPF_ANY) == 0)
		sc->st.procs_set++;
}

/* Every live process running (dev, ino): one stat of /proc/PID/exe each,
 * done only when an executable's need goes up (a few times at most) and
 * when its copy is fitted (once). */
static void set_running(struct stackcopy *sc, uint64_t dev, uint64_t ino, uint32_t bytes,
			bool exact)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char path[300];
	struct stat st;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/exe", de->d_name);
		if (stat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino)
			set_pid(sc, atoi(de->d_name), bytes, exact);
	}
	closedir(d);
}

/*
 * Twice the need, as a power of two from 4 KiB: what one sample lacked is
 * only its next frame's need, and each raise costs the samples taken until
 * the daemon reads the ring again (up to 100 ms of them).  4 KiB covers
 * most stacks that need CFI at all (libc under frame-pointer code), for
 * ~0.6 us a sample on the development VM (docs/benchmarks.md); what it
 * overshoots, stackcopy__used takes back.
 */
static uint32_t round_need(uint64_t bytes, uint32_t max)
{
	uint32_t b = 4096;

	while (b < 2 * bytes && b < max)
		b <<= 1;
	return b < max ? b : max;
}

void stackcopy__need(struct stackcopy *sc, int pid, uint64_t bytes, bool below_fp)
{
	uint32_t want = round_need(bytes, sc->max_bytes) | (below_fp ? PROFD_COPY_TO_FP : 0);
	struct proc_exe exe;
	struct exe_need *e;

	/* Not for ourselves: the more we copy, the more we work, and the more
	 * of us there is to sample (whole-system profiles). */
	if (pid == getpid())
		return;
	if (procs__exe(sc->procs, pid, &exe)) {
		set_pid(sc, pid, want, false);
		return;
	}
	e = find(sc, exe.dev, exe.ino);
	if (e) {
		/* The larger size, and the frame-pointer bound only if both had it. */
		uint32_t size = (e->bytes & ~PROFD_COPY_TO_FP) > (want & ~PROFD_COPY_TO_FP) ?
					e->bytes & ~PROFD_COPY_TO_FP : want & ~PROFD_COPY_TO_FP;

		want = size | (e->bytes & want & PROFD_COPY_TO_FP);
		if (want == e->bytes) {
			set_pid(sc, pid, e->bytes, false);	/* a process we missed */
			return;
		}
	}
	if (!e) {
		if (sc->nexes == STACKCOPY_MAX_EXES) {
			size_t min = 0;

			for (size_t i = 1; i < sc->nexes; i++)
				if ((sc->exes[i].bytes & ~PROFD_COPY_TO_FP) <
				    (sc->exes[min].bytes & ~PROFD_COPY_TO_FP))
					min = i;
			if (covers(sc->exes[min].bytes, want))
				return;
			e = &sc->exes[min];
			sc->unfitted -= !e->fitted;
		} else {
			e = &sc->exes[sc->nexes++];
			sc->st.exes++;
		}
		*e = (struct exe_need){.dev = exe.dev, .ino = exe.ino};
		sc->unfitted++;
	}
	e->bytes = want;
	/* What samples read of the smaller copy does not show this need. */
	e->used_n = 0;
	sc->st.raised++;
	log__debug("stack copy for %s: %u bytes%s", exe.path, want & ~PROFD_COPY_TO_FP,
		   (want & PROFD_COPY_TO_FP) ? ", up to the frame pointer" : "");
	set_pid(sc, pid, want, false);
	set_running(sc, exe.dev, exe.ino, want, false);
}

/*
 * A raise doubles a need known only up to the next frame, to a power of
 * two, so a copy can be twice what the deepest stack reads, and each KiB
 * copied costs a sample ~150 ns (docs/benchmarks.md).  Once
 * STACKCOPY_FIT_SAMPLES complete samples of an executable came in since
 * its last raise, its copy is cut to what the deepest of them read, plus
 * a quarter, in 512-byte steps.  Once: a deeper stack later raises it as
 * any need does, and it stays raised.  Not a copy bound by the frame
 * pointer: that bound follows each sample already.
 */
static uint32_t fit_bytes(uint32_t used)
{
	uint64_t b = (uint64_t)used + used / 4;

	b = (b + 511) & ~(uint64_t)511;
	return b < 2 * PROFD_STACK_SMALL ? 2 * PROFD_STACK_SMALL : (uint32_t)b;
}

void stackcopy__used(struct stackcopy *sc, int pid, uint64_t bytes)
{
	struct proc_exe exe;
	struct exe_need *e;
	uint32_t want;

	if (!sc->unfitted || procs__exe(sc->procs, pid, &exe))
		return;
	e = find(sc, exe.dev, exe.ino);
	if (!e || e->fitted || (e->bytes & PROFD_COPY_TO_FP) || bytes > e->bytes)
		return;
	if (bytes > e->used_max)
		e->used_max = bytes;
	if (++e->used_n < STACKCOPY_FIT_SAMPLES)
		return;
	e->fitted = true;
	sc->unfitted--;
	want = fit_bytes(e->used_max);
	if (want >= e->bytes)
		return;
	log__debug("stack copy for %s: %u bytes, fitted to %u read (was %u)", exe.path, want,
		   e->used_max, e->bytes);
	e->bytes = want;
	sc->st.fitted++;
	set_running(sc, exe.dev, exe.ino, want, true);
}

void stackcopy__exec(struct stackcopy *sc, int pid)
{
	struct proc_exe exe;
	struct exe_need *e;

	if (!sc->nexes || procs__exe(sc->procs, pid, &exe))
		return;
	e = find(sc, exe.dev, exe.ino);
	/* The executable's copy, even where the image before had a larger one. */
	if (e)
		set_pid(sc, pid, e->bytes, true);
}

void stackcopy__stats(const struct stackcopy *sc, struct stackcopy_stats *st)
{
	*st = sc->st;
}
