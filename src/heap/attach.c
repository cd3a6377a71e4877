// SPDX-License-Identifier: BSD-2-Clause
/*
 * attach: one target process's probes on one allocator object, and the
 * probes its children inherit.  A process that is not a target runs its
 * allocator untouched: the kernel installs a probe's breakpoints only in
 * the memory its perf events' filter accepts.
 *
 * How (kernel/events/uprobes.c and kernel/trace/trace_uprobe.c, the same
 * from 6.1 to 6.18): each probe site is one tracefs uprobe
 * (tracer/uprobe_event.h), made once per object, with the BPF program
 * attached once, through a holder event on a task that never runs it
 * (kthreadd).  A target gets a perf event on each, opened for its pid with
 * inherit: its memory joins the probe's filter, and a child it forks gets
 * the events, and so the probes, before it runs (the breakpoints come with
 * the pages fork copies).  A hit runs the probe's one consumer, which runs
 * the BPF program once, whatever the number of targets.  The events stay
 * disabled, so nothing is scheduled with the process at context switches.
 *
 * Closing a target's events ends its descendants' inherited ones too, so a
 * target that exits or stops being one first gives its living inheriting
 * descendants (h->kin) events of their own (heap_attach__gone).
 *
 * Without tracefs or kthreadd (a container), probes are made for every
 * process instead (h->probe_all, pid -1), with libbpf's uprobes or a
 * uprobe_multi session, and the BPF side filters.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
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
#include "proc/procstat.h"
#include "tracer/bpfobj.h"
#include "tracer/kernel.h"
#include "tracer/uprobe_event.h"

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

static void object_events_free(struct heap *h, size_t obj);

void heap_attach__fini(struct heap *h)
{
	heap_attach__drop(h, 0);
	if (h->closer_fd[1] >= 0) {
		close(h->closer_fd[1]);	/* the thread reads to the end, then returns */
		pthread_join(h->closer, NULL);
		close(h->closer_fd[0]);
		h->closer_fd[0] = h->closer_fd[1] = -1;
	}
	/* Every target's events are closed now: the probes can go. */
	for (size_t i = 0; i < h->nobjs; i++)
		object_events_free(h, i);
	free(h->kin);
	h->kin = NULL;
	h->nkin = h->kin_cap = 0;
}

/* The pid of kthreadd, or negative errno: a kernel thread has no memory,
 * so events on it put breakpoints nowhere, and it outlives the daemon. */
static int kthreadd_pid(void)
{
	char comm[32] = "";
	ssize_t n;
	int fd = open("/proc/2/comm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	comm[n > 0 ? n : 0] = '\0';
	return strcmp(comm, "kthreadd\n") ? -ESRCH : 2;
}

int heap_attach__shared_init(struct heap *h)
{
	int pid = kthreadd_pid();

	if (pid < 0)
		return pid;
	h->holder_pid = pid;
	uprobe_event__clean_stale();
	return 0;
}

static long kin_find(const struct heap *h, int pid)
{
	for (size_t i = 0; i < h->nkin; i++)
		if (h->kin[i].pid == pid)
			return i;
	return -1;
}

/* The target whose events pid carries: itself, its root, or 0. */
static int root_of(const struct heap *h, int pid)
{
	long k;

	for (size_t i = 0; i < h->natt; i++)
		if (h->att[i].pid == pid)
			return pid;
	k = kin_find(h, pid);
	return k >= 0 ? h->kin[k].root : 0;
}

bool heap_attach__covers(const struct heap *h, int pid, size_t obj)
{
	int root;

	if (heap_attach__has(h, pid, obj))
		return true;
	root = h->probe_all ? 0 : root_of(h, pid);
	return root > 0 && heap_attach__has(h, root, obj);
}

int heap_attach__forked(struct heap *h, int pid, int ppid)
{
	int root = h->probe_all ? 0 : root_of(h, ppid);
	long k;

	if (root <= 0)
		return 0;
	k = kin_find(h, pid);
	if (k >= 0) {
		/* A reused pid: the kin that had it is gone. */
		h->kin[k].root = root;
		return 1;
	}
	/* Exits lost to a full ring leave entries of processes gone: they go
	 * before the table grows past a few thousand. */
	if (h->nkin == h->kin_cap && h->kin_cap >= 4096) {
		for (size_t i = 0; i < h->nkin;) {
			if (kill(h->kin[i].pid, 0) && errno == ESRCH)
				h->kin[i] = h->kin[--h->nkin];
			else
				i++;
		}
	}
	if (h->nkin == h->kin_cap) {
		size_t cap = h->kin_cap ? 2 * h->kin_cap : 64;
		struct heap_kin *n = realloc(h->kin, cap * sizeof(*n));

		/* Not known, it is not promoted when its root goes: only then
		 * does it lose its probes. */
		if (!n)
			return 1;
		h->kin = n;
		h->kin_cap = cap;
	}
	h->kin[h->nkin++] = (struct heap_kin){pid, root};
	h->as.inherited++;
	return 1;
}

void heap_attach__gone(struct heap *h, int pid)
{
	long k = kin_find(h, pid);

	if (k >= 0) {
		/* Its inherited events are the kernel's to end (at its exit);
		 * a descendant that exec'd another program keeps trapping,
		 * and the BPF side drops its calls. */
		h->kin[k] = h->kin[--h->nkin];
		return;
	}
	/* A root: its living descendants get events of their own before its
	 * are closed.  The kernel's filter has their memory already, so
	 * opening them writes no breakpoint. */
	for (size_t i = 0; i < h->nkin;) {
		if (h->kin[i].root != pid) {
			i++;
			continue;
		}
		int child = h->kin[i].pid;

		h->kin[i] = h->kin[--h->nkin];
		if (kill(child, 0) && errno == ESRCH)
			continue;
		for (size_t j = 0; j < h->natt; j++)
			if (h->att[j].pid == pid)
				heap_attach__add(h, child, h->att[j].obj);
		h->as.promoted++;
	}
	heap_attach__drop(h, pid);
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

/* The name of objs[obj]'s probe number i in tracefs. */
static void event_name(char *buf, size_t len, size_t obj, int i)
{
	snprintf(buf, len, "o%zu_%d", obj, i);
}

static void object_events_free(struct heap *h, size_t obj)
{
	struct heap_object *o = &h->objs[obj];
	char name[32];

	for (int i = 0; i < o->nev; i++) {
		/* Closes the holder's perf event too. */
		if (o->holders[i])
			bpf_link__destroy(o->holders[i]);
		o->holders[i] = NULL;
		event_name(name, sizeof(name), obj, i);
		/* Busy until the kernel has let go of the last perf event on
		 * it (the closer thread's, a moment ago). */
		for (int tries = 0; uprobe_event__remove(name) == -EBUSY && tries < 50; tries++)
			usleep(10000);
	}
	o->nev = 0;
}

/*
 * objs[obj]'s probes in tracefs, each with the BPF program and its cookie
 * on a holder event, made the first time a target maps the object.
 */
static int object_events(struct heap *h, size_t obj)
{
	struct heap_object *o = &h->objs[obj];
	char name[32];
	int err = 0;

	if (o->nev)
		return 0;
	for (int i = 0; i < o->n; i++) {
		for (int ret = 0; ret <= (int)o->ret[i]; ret++) {
			int id, fd;

			event_name(name, sizeof(name), obj, o->nev);
			id = uprobe_event__create(name, o->fd, o->offsets[i], ret);
			if (id < 0) {
				err = id;
				goto cleanup;
			}
			o->ev_ids[o->nev] = id;
			o->holders[o->nev] = NULL;
			o->nev++;
			fd = uprobe_event__open(id, h->holder_pid, 0);
			if (fd < 0) {
				err = fd;
				goto cleanup;
			}
			o->holders[o->nev - 1] = heap_bpf__attach_event(h->obj, fd, o->cookies[i], ret);
			if (!o->holders[o->nev - 1]) {
				err = -errno;
				close(fd);
				goto cleanup;
			}
		}
	}
	return 0;
cleanup:
	log__warn("heap: allocator probes in %s: %s", o->name, strerror(-err));
	object_events_free(h, obj);
	return err ? err : -EINVAL;
}

static int link_probes(struct heap *h, struct heap_attach *a, const struct heap_object *o,
		       bool unmapped)
{
	char path[64];
	int fd;

	if (!h->probe_all && a->pid > 0) {
		int err = object_events(h, a->obj);

		if (err)
			return err;
		/* First, so that no child is forked with a clone of its
		 * context meanwhile (uprobe_event.h). */
		fd = uprobe_event__noclone(a->pid);
		if (fd < 0)
			return fd;
		a->links[a->nlinks] = NULL;
		a->link_fds[a->nlinks++] = fd;
		for (int i = 0; i < o->nev; i++) {
			fd = uprobe_event__open(o->ev_ids[i], a->pid,
						UPROBE_EVENT_INHERIT |
							(unmapped ? UPROBE_EVENT_UNMAPPED : 0));
			if (fd < 0)
				return fd;
			a->links[a->nlinks] = NULL;
			a->link_fds[a->nlinks++] = fd;
		}
		return 0;
	}
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
	struct procstat ps;

	return procstat__read("/proc", pid, &ps) ? 0 : ps.starttime;
}

bool heap_attach__has(const struct heap *h, int pid, size_t obj)
{
	for (size_t i = 0; i < h->natt; i++)
		if (h->att[i].pid == pid && h->att[i].obj == obj)
			return true;
	return false;
}

static int add(struct heap *h, int pid, size_t obj, bool unmapped)
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
	err = link_probes(h, a, o, unmapped && !h->probe_all);
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

int heap_attach__add(struct heap *h, int pid, size_t obj)
{
	return add(h, pid, obj, false);
}

int heap_attach__add_unmapped(struct heap *h, int pid, size_t obj)
{
	return add(h, pid, obj, true);
}

int heap_attach__redo(struct heap *h, int pid, size_t obj)
{
	struct heap_attach fresh, *a = NULL;
	int err;

	for (size_t i = 0; i < h->natt && !a; i++)
		if (h->att[i].pid == pid && h->att[i].obj == obj)
			a = &h->att[i];
	if (!a || h->probe_all)
		return -ENOENT;
	memset(&fresh, 0, sizeof(fresh));
	fresh.pid = pid;
	fresh.obj = obj;
	fresh.start = a->start;
	/*
	 * The old ones go first, here and now: while any event for the
	 * process is open, the kernel takes its memory as covered and opening
	 * more writes no breakpoint (uprobe_perf_open).  Closing a target's
	 * event is quick (the probe's last event, the holder, stays).
	 */
	for (int i = 0; i < a->nlinks; i++)
		if (a->link_fds[i] > 0)
			close(a->link_fds[i]);
	a->nlinks = 0;
	err = link_probes(h, &fresh, &h->objs[obj], false);
	if (err) {
		unlink_all(h, &fresh);
		return err;
	}
	*a = fresh;
	return 0;
}

int heap_attach__prepare(struct heap *h, size_t obj)
{
	return h->probe_all ? 0 : object_events(h, obj);
}

void heap_attach__drop(struct heap *h, int pid)
{
	if (!pid)
		h->nkin = 0;	/* everything's events go, inherited ones too */
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

size_t heap_attach__preloads(const struct heap *h)
{
	size_t n = 0;

	for (size_t i = 0; i < h->natt; i++)
		n += h->att[i].pid == -1 && h->objs[h->att[i].obj].preload;
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
