// SPDX-License-Identifier: BSD-2-Clause
/*
 * attach: one target process's probes on one allocator object.  Probes
 * are opened for that process alone (a perf-event uprobe or a uprobe_multi
 * link with its pid), so the kernel installs their breakpoints only in its
 * memory: a process that is not a target runs its allocator untouched.
 *
 * What the kernel does with them (kernel/events/uprobes.c and
 * kernel/trace/trace_uprobe.c of 6.12): opening one walks every
 * mapping of the file (register_for_each_vma) and writes the breakpoint
 * where the consumers' filters accept the mm; an exec keeps it (the
 * filter is the task's mm, and the new mm's libc is probed when ld.so maps
 * it); a fork copies the patched pages but not the probe, so a target's
 * child gets its own here when its fork is reported (heap_probe__on_proc).
 * Each hit runs every consumer of that address, one per attached process:
 * a target's trap costs more the more processes are attached
 * (docs/benchmarks.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/abi/heap.h"
#include "heap/heap_bpf.h"
#include "heap/heap_int.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "tracer/bpfobj.h"
#include "tracer/kernel.h"

/*
 * Removing probes waits: the kernel ends each perf-event uprobe (or each
 * uprobe_multi link) with an RCU tasks-trace grace period, tens of
 * milliseconds each on a loaded machine, and a process's uprobe pairs are
 * 17 events.  On the loop's thread a backend's exit stalled every event
 * behind it by a second; so a thread of its own closes them.  The
 * breakpoints go from the process's memory as each closes.
 */
struct doomed {
	struct bpf_link *link;	/* or */
	int fd;
};

static void *closer_main(void *arg)
{
	int rfd = *(int *)arg;
	struct doomed d;

	while (read(rfd, &d, sizeof(d)) == sizeof(d)) {
		if (d.link)
			bpf_link__destroy(d.link);
		else
			close(d.fd);
	}
	return NULL;
}

int heap_attach__init(struct heap *h)
{
	int err;

	h->closer_fd[0] = h->closer_fd[1] = -1;
	if (pipe(h->closer_fd))
		return -errno;
	fcntl(h->closer_fd[0], F_SETFD, FD_CLOEXEC);
	fcntl(h->closer_fd[1], F_SETFD, FD_CLOEXEC);
	err = pthread_create(&h->closer, NULL, closer_main, &h->closer_fd[0]);
	if (err) {
		close(h->closer_fd[0]);
		close(h->closer_fd[1]);
		h->closer_fd[0] = h->closer_fd[1] = -1;
		return -err;
	}
	return 0;
}

void heap_attach__fini(struct heap *h)
{
	heap_attach__drop(h, 0);
	if (h->closer_fd[1] < 0)
		return;
	close(h->closer_fd[1]);	/* the thread reads to the end, then returns */
	pthread_join(h->closer, NULL);
	close(h->closer_fd[0]);
	h->closer_fd[0] = h->closer_fd[1] = -1;
}

static void doom(struct heap *h, struct bpf_link *link, int fd)
{
	struct doomed d = {link, fd};

	/* A record is far below PIPE_BUF: written whole or not at all. */
	if (h->closer_fd[1] >= 0 && write(h->closer_fd[1], &d, sizeof(d)) == sizeof(d))
		return;
	if (link)
		bpf_link__destroy(link);
	else
		close(fd);
}

static void unlink_all(struct heap *h, struct heap_attach *a)
{
	for (int i = 0; i < a->nlinks; i++) {
		if (a->links[i])
			doom(h, a->links[i], -1);
		else if (a->link_fds[i] > 0)
			doom(h, NULL, a->link_fds[i]);
	}
	a->nlinks = 0;
}

/* Over the bound: counted, and said at most once a minute. */
static void refuse(struct heap *h, int pid)
{
	int64_t now = clock__mono_ns();

	h->as.refused++;
	if (h->as.refused_logged_ns && now - h->as.refused_logged_ns < 60 * 1000000000ll)
		return;
	h->as.refused_logged_ns = now;
	log__warn("heap: process %d is a target, but all %zu attachments are taken "
		  "(heap_max_attach): it is not tracked (%" PRIu64 " refused so far)", pid,
		  h->max_att, h->as.refused);
}

static int link_probes(struct heap *h, struct heap_attach *a, const struct heap_object *o)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", o->fd);
	if (bpfobj__features(h->obj)->uprobe_session) {
		fd = heap_bpf__attach_session(h->obj, path, o->offsets, o->cookies, o->n, a->pid);
		if (fd < 0)
			return fd;
		a->link_fds[a->nlinks++] = fd;
		return 0;
	}
	/* A uprobe per entry, a uretprobe per allocating function. */
	for (int i = 0; i < o->n; i++) {
		for (int ret = 0; ret <= (int)o->ret[i]; ret++) {
			struct bpf_link *l = heap_bpf__attach_uprobe(h->obj, path, o->offsets[i],
								     o->cookies[i], ret, a->pid);

			if (!l)
				return -errno;
			a->links[a->nlinks++] = l;
		}
	}
	return 0;
}

/*
 * When pid started (/proc/PID/stat's starttime), or 0 if it cannot be read
 * (gone).  Tells a process from a later one given its pid: an exit not
 * reported (a full ring buffer) must not leave the newcomer untracked.
 */
static uint64_t start_time(int pid)
{
	char path[64], buf[1024];
	unsigned long long t = 0;
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* After the comm, which may hold anything: field 22 is the 20th. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			 "%*d %*d %*d %*d %llu", &t) != 1)
		return 0;
	return t;
}

bool heap_attach__has(const struct heap *h, int pid, size_t obj)
{
	for (size_t i = 0; i < h->natt; i++)
		if (h->att[i].pid == pid && h->att[i].obj == obj)
			return true;
	return false;
}

int heap_attach__add(struct heap *h, int pid, size_t obj)
{
	const struct heap_object *o = &h->objs[obj];
	struct heap_attach *a;
	int64_t t0;
	int err;

	if (heap_attach__has(h, pid, obj)) {
		size_t i;

		for (i = 0; h->att[i].pid != pid; i++)
			;
		if (pid <= 0 || h->att[i].start == start_time(pid))
			return 0;
		/* pid was reused: those probes were an exited process's. */
		heap_attach__drop(h, pid);
	}
	if (h->natt >= h->max_att) {
		refuse(h, pid);
		return -ENOSPC;
	}
	if (h->natt == h->att_cap) {
		size_t cap = h->att_cap ? 2 * h->att_cap : 16;
		struct heap_attach *n = realloc(h->att, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		h->att = n;
		h->att_cap = cap;
	}
	a = &h->att[h->natt];
	memset(a, 0, sizeof(*a));
	a->pid = pid;
	a->obj = obj;
	a->start = pid > 0 ? start_time(pid) : 0;
	t0 = clock__mono_ns();
	err = link_probes(h, a, o);
	if (err) {
		unlink_all(h, a);
		/* A process that exited before we got to it is no news. */
		if (err == -ESRCH) {
			h->as.vanished++;
		} else {
			h->as.failed++;
			log__warn("heap: probing %s for process %d failed: %s", o->name, pid,
				  strerror(-err));
		}
		return err;
	}
	log__debug("heap: probes for process %d on %s made in %.1f ms", pid, o->name,
		   (clock__mono_ns() - t0) / 1e6);
	h->as.ns += clock__mono_ns() - t0;
	h->as.made++;
	h->natt++;
	return 1;
}

void heap_attach__drop(struct heap *h, int pid)
{
	for (size_t i = 0; i < h->natt;) {
		if (pid && h->att[i].pid != pid) {
			i++;
			continue;
		}
		unlink_all(h, &h->att[i]);
		h->att[i] = h->att[--h->natt];
	}
}

size_t heap_attach__objects(const struct heap *h)
{
	size_t n = 0;

	for (size_t obj = 0; obj < h->nobjs; obj++)
		for (size_t i = 0; i < h->natt; i++)
			if (h->att[i].obj == obj) {
				n++;
				break;
			}
	return n;
}

size_t heap_attach__processes(const struct heap *h)
{
	size_t n = 0;

	for (size_t i = 0; i < h->natt; i++) {
		size_t j;

		for (j = 0; j < i && h->att[j].pid != h->att[i].pid; j++)
			;
		n += j == i;
	}
	return n;
}
