// SPDX-License-Identifier: BSD-2-Clause
/*
 * titles: per process: its title labels, read from /proc (rate-limited, bounded) (the
 * contract: titles.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/hash.h"
#include "lib/htab.h"
#include "proc/pgexe.h"
#include "proc/procstat.h"
#include "proc/titles.h"

struct title_entry {
	int pid;
	bool read;		/* labels hold a successful read */
	bool stale;		/* read again on the next get */
	bool exited;		/* don't try /proc again until stale */
	bool provisional;	/* a title about to change: read again soon */
	/* pgexe__is_postgres() of the program it runs: 0 not asked yet, 1 or
	 * -1.  Asked once per program (~10 µs: readlink, open, fstat and
	 * fstatfs), not at every re-read of a backend's title; an exec or a
	 * new process behind the pid (titles__stale with an event) asks again. */
	signed char pg;
	int64_t read_ns;	/* last attempt */
	int64_t exit_ns;	/* labels from an exit title: when it exited, or 0 */
	/* When it was known gone (its EXIT event, its exit title, a /proc
	 * read that failed), or 0; titles__expire drops it after that. */
	int64_t gone_ns;
	uint64_t used;		/* lookup clock, for eviction */
	struct proctitle labels;
};

/* A title reported at exit, or at a first sample (live), for a process not
 * looked up yet. */
struct exit_title {
	int pid;		/* 0: free */
	char comm[PROCTITLE_LABEL_MAX];
	char title[TITLES_EXIT_TITLE_MAX];
	size_t len;
	bool forked;		/* a forked child: its parent's title is not its own */
	bool live;		/* read at its first sample, not at its exit */
	/* When it called exit_group, or (live) when it was read
	 * (CLOCK_MONOTONIC); 0: unknown. */
	int64_t exit_ns;
	/* Live: when its exit was reported before it was looked up (its EXIT
	 * event found no entry to mark), or 0. */
	int64_t gone_ns;
};

struct title_watch {
	int pid;
	int step;		/* index into TITLES_WATCH_NS */
	int64_t since_ns;	/* the fork */
};

struct titles {
	char *root;
	size_t max;
	int64_t reread_ns;
	struct title_entry *v;
	size_t n, cap;
	struct htab index;
	uint64_t clock;
	struct titles_stats st;
	struct title_watch watch[TITLES_WATCH_MAX];
	size_t nwatch;
	/* The postgres binaries believed so far, newest replacing oldest. */
	struct pgexe_id pg_known[TITLES_PG_KNOWN];
	size_t npg_known, pg_next;
	struct exit_title *exits;	/* TITLES_EXITS, a ring; allocated at first use */
	size_t exit_next;
	struct htab exit_index;		/* pid -> position in exits, for the used ones */
};

static const int64_t watch_ns[TITLES_WATCH_STEPS] = TITLES_WATCH_NS;

static bool pid_eq(const void *ctx, size_t pos, const void *key)
{
	const struct titles *t = ctx;

	return t->v[pos].pid == *(const int *)key;
}

static long find(const struct titles *t, int pid)
{
	return htab__find(&t->index, hash__pid(pid), pid_eq, t, &pid, NULL);
}

struct titles *titles__new(const char *proc_root, size_t max, int64_t reread_ns)
{
	struct titles *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->root = strdup(proc_root);
	if (!t->root) {
		free(t);
		return NULL;
	}
	t->max = max < 4 ? 4 : max;
	t->reread_ns = reread_ns;
	return t;
}

void titles__free(struct titles *t)
{
	if (!t)
		return;
	htab__free(&t->index);
	htab__free(&t->exit_index);
	free(t->v);
	free(t->exits);
	free(t->root);
	free(t);
}

/* Up to cap bytes of root/pid/name; the count, or negative errno. */
static ssize_t read_file(const struct titles *t, int pid, const char *name, char *buf, size_t cap)
{
	char path[4096];
	ssize_t n, got = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/%s", t->root, pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)got < cap) {
		n = read(fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	return got;
}

/*
 * A postgres child between fork and its first set_ps_display() still shows
 * the postmaster's command line, so it parses as "postmaster".  The real
 * postmaster's parent is not a postgres process (init, pg_ctl, systemd).
 */
static bool untitled_child(const struct titles *t, int pid)
{
	struct procstat self, parent;

	if (procstat__read(t->root, pid, &self) || self.ppid <= 1 ||
	    procstat__read(t->root, self.ppid, &parent))
		return false;
	return !strcmp(parent.comm, "postgres") || !strcmp(parent.comm, "postmaster");
}

static bool exit_pid_eq(const void *ctx, size_t pos, const void *key)
{
	const struct titles *t = ctx;

	return t->exits[pos].pid == *(const int *)key;
}

/* The exit title kept for pid, or NULL.  A hash lookup: it is asked at
 * every fork, exec and sample of an unknown process. */
static struct exit_title *exit_find(struct titles *t, int pid)
{
	long pos = t->exits ? htab__find(&t->exit_index, hash__pid(pid), exit_pid_eq, t, &pid, NULL)
			    : -1;

	return pos >= 0 ? &t->exits[pos] : NULL;
}

/* Forget x (its slot in the ring is free again). */
static void exit_drop(struct titles *t, struct exit_title *x)
{
	htab__remove(&t->exit_index, hash__pid(x->pid), (size_t)(x - t->exits));
	x->pid = 0;
}

/* e's labels from an exit title: final, the process is gone. */
static void use_exit_title(struct titles *t, struct title_entry *e, const char *comm,
			   const char *title, size_t len, bool forked, int64_t exit_ns)
{
	struct proctitle labels;

	if (proctitle__parse(comm, title, len, &labels) < 0)
		return;
	/* A forked child that still showed its parent's command line had not
	 * said what it is: no labels, as when read alive (untitled_child). */
	if (forked && !strcmp(labels.backend_type, "postmaster"))
		memset(&labels, 0, sizeof(labels));
	e->labels = labels;
	e->read = true;
	e->exited = true;
	e->exit_ns = exit_ns;
	/* Gone: its exit may have been reported before this entry existed
	 * (a backend's samples are drained after its exit), and then
	 * titles__exited() found nothing to mark. */
	if (!e->gone_ns)
		e->gone_ns = exit_ns;
	e->provisional = false;
	e->stale = false;
	t->st.exit_titles_used++;
}

/*
 * e's labels, just parsed from a living process's title, settled: none
 * while it is an untitled child (a postgres child still showing its
 * parent's command line), which is read again soon, as is an autovacuum
 * worker that has not named its database yet (it lives briefly).
 */
static void settle_labels(struct title_entry *e, bool untitled)
{
	e->read = !untitled;
	e->provisional = untitled;
	if (untitled)
		memset(&e->labels, 0, sizeof(e->labels));
	else if (!strcmp(e->labels.backend_type, "autovacuum worker") && !e->labels.database[0])
		e->provisional = true;
}

/*
 * e's first read, from the title the kernel side read at its first sample
 * at read_ns: as reread() would take it from /proc, without the checks the
 * title area already stands for (a postgres binary; a forked child, not
 * untitled_child()'s two stat reads).
 */
static void use_live_title(struct titles *t, struct title_entry *e, const char *comm,
			   const char *title, size_t len, bool forked, int64_t read_ns)
{
	struct proctitle labels;

	if (proctitle__parse(comm, title, len, &labels) < 0)
		return;
	e->read_ns = read_ns;
	e->stale = false;
	e->pg = 1;
	e->labels = labels;
	settle_labels(e, forked && !strcmp(labels.backend_type, "postmaster"));
	t->st.live_titles_used++;
}

/* e's labels from the reported title x, which is then forgotten.  A live
 * title of a process whose exit came first marks it gone, so that it
 * expires (titles__expire) as the exit would have. */
static void use_reported(struct titles *t, struct title_entry *e, struct exit_title *x)
{
	if (x->live) {
		use_live_title(t, e, x->comm, x->title, x->len, x->forked, x->exit_ns);
		if (x->gone_ns) {
			e->exited = true;
			e->gone_ns = x->gone_ns;
		}
	} else {
		use_exit_title(t, e, x->comm, x->title, x->len, x->forked, x->exit_ns);
	}
	exit_drop(t, x);
}

/* Does pid run a postgres binary (pgexe.h)?  A backend runs the file its
 * postmaster was believed of: one stat(), not the whole check. */
static bool runs_postgres(struct titles *t, int pid)
{
	struct pgexe_id id;

	if (pgexe__runs_known(t->root, pid, t->pg_known, t->npg_known)) {
		t->st.pg_known++;
		return true;
	}
	if (!pgexe__check(t->root, pid, &id))
		return false;
	t->pg_known[t->pg_next] = id;
	t->pg_next = (t->pg_next + 1) % TITLES_PG_KNOWN;
	if (t->npg_known < TITLES_PG_KNOWN)
		t->npg_known++;
	return true;
}

/* Read and parse pid's title into e; a failure leaves e's labels as they
 * were.  comm: the process's name if the caller knows it (not read then). */
static void reread(struct titles *t, struct title_entry *e, const char *hint, int64_t now_ns)
{
	char comm[PROCTITLE_LABEL_MAX], *title;
	ssize_t nc, nt;

	e->read_ns = now_ns;
	e->stale = false;
	t->st.reads++;
	title = malloc(PROCTITLE_SCAN_MAX);
	if (!title)
		return;
	if (hint) {
		nc = (ssize_t)strnlen(hint, TITLES_COMM_MAX);
		memcpy(comm, hint, (size_t)nc);
	} else {
		nc = read_file(t, e->pid, "comm", comm, sizeof(comm) - 1);
	}
	nt = nc < 0 ? nc : read_file(t, e->pid, "cmdline", title, PROCTITLE_SCAN_MAX);
	/* A zombie's cmdline is empty: keep what its living self said. */
	if (nc >= 0 && nt > 0) {
		comm[nc] = '\0';
		proctitle__parse(comm, title, (size_t)nt, &e->labels);
		/* Believed only of a postgres binary (pgexe.h). */
		if (e->labels.backend_type[0] && !e->pg)
			e->pg = runs_postgres(t, e->pid) ? 1 : -1;
		if (e->labels.backend_type[0] && e->pg < 0) {
			memset(&e->labels, 0, sizeof(e->labels));
			t->st.not_postgres++;
		}
		settle_labels(e, !strcmp(e->labels.backend_type, "postmaster") &&
					 untitled_child(t, e->pid));
	} else if (nc < 0 || nt < 0) {
		/* Gone, maybe before it was ever looked up: no exit event will
		 * mark it, so it is marked here. */
		e->exited = true;
		if (!e->gone_ns)
			e->gone_ns = now_ns > 0 ? now_ns : 1;
	}
	free(title);
	/* Gone (or a zombie) before it was read: what it said as it exited. */
	if (!e->read || e->provisional) {
		struct exit_title *x = exit_find(t, e->pid);

		if (x && !x->live && (nc < 0 || nt <= 0 || e->provisional)) {
			use_exit_title(t, e, x->comm, x->title, x->len, x->forked, x->exit_ns);
			exit_drop(t, x);
		}
	}
}

static int by_use(const void *a, const void *b)
{
	const struct title_entry *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used;
}

/* Drop the least recently used quarter (at least one entry). */
static void evict(struct titles *t)
{
	size_t keep = t->n - (t->n / 4 ?: 1);

	qsort(t->v, t->n, sizeof(*t->v), by_use);
	t->st.evictions += t->n - keep;
	memmove(t->v, t->v + (t->n - keep), keep * sizeof(*t->v));
	t->n = keep;
	htab__clear(&t->index);
	for (size_t i = 0; i < t->n; i++) {
		struct htab_slot *slot;

		/* Cannot fail: the table had room for more than this before. */
		htab__find(&t->index, hash__pid(t->v[i].pid), pid_eq, t, &t->v[i].pid, &slot);
		htab__set(&t->index, slot, hash__pid(t->v[i].pid), i);
	}
}

const struct proctitle *titles__get(struct titles *t, int pid, int64_t now_ns)
{
	return titles__get_named(t, pid, NULL, now_ns);
}

const struct proctitle *titles__get_named(struct titles *t, int pid, const char *comm,
					  int64_t now_ns)
{
	struct title_entry *e;
	struct htab_slot *slot;
	int64_t interval;
	long pos;

	if (!t || pid <= 0)
		return NULL;
	pos = find(t, pid);
	if (pos < 0) {
		if (t->n >= t->max)
			evict(t);
		if (htab__reserve(&t->index) ||
		    array__grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
			return NULL;
		htab__find(&t->index, hash__pid(pid), pid_eq, t, &pid, &slot);
		t->v[t->n] = (struct title_entry){.pid = pid, .stale = true};
		htab__set(&t->index, slot, hash__pid(pid), t->n);
		pos = (long)t->n++;
	}
	e = &t->v[pos];
	e->used = ++t->clock;
	/* Its title reported by the kernel side, at its exit (a pgbench -C
	 * backend's samples are drained after it) or at its first sample: no
	 * /proc read.  A provisional one from a first sample is read from
	 * /proc when due, like any other. */
	if (e->stale && !e->read) {
		struct exit_title *x = exit_find(t, pid);

		if (x) {
			use_reported(t, e, x);
			if (e->read || !e->provisional)
				return e->read ? &e->labels : NULL;
		}
	}
	interval = e->provisional ? TITLES_PROVISIONAL_NS : t->reread_ns;
	if (e->stale || (!e->exited && now_ns - e->read_ns >= interval))
		reread(t, e, comm, now_ns);
	return e->read ? &e->labels : NULL;
}

void titles__watch(struct titles *t, int pid, int64_t now_ns)
{
	if (!t || pid <= 0)
		return;
	if (t->nwatch == TITLES_WATCH_MAX) {
		t->st.watch_full++;
		return;
	}
	t->watch[t->nwatch++] = (struct title_watch){pid, 0, now_ns};
}

int64_t titles__poll(struct titles *t, int64_t now_ns)
{
	int64_t next = -1;
	size_t i = 0;
	int reads = 0;

	while (t && i < t->nwatch) {
		struct title_watch *w = &t->watch[i];
		int64_t due = w->since_ns + watch_ns[w->step];

		if (due > now_ns) {
			next = next < 0 || due < next ? due : next;
			i++;
			continue;
		}
		/* A fork storm fills the watch list: read a bounded number now
		 * and the rest on the event loop's next pass. */
		if (reads++ == TITLES_POLL_MAX)
			return now_ns;
		/* A get, forced: the entry may be fresh from a sample's read. */
		titles__stale(t, w->pid, 0);
		titles__get(t, w->pid, now_ns);
		if (++w->step < TITLES_WATCH_STEPS) {
			due = w->since_ns + watch_ns[w->step];
			next = next < 0 || due < next ? due : next;
			i++;
		} else {
			*w = t->watch[--t->nwatch];	/* done: swap-remove, look at i again */
		}
	}
	return next;
}

static void reported_title(struct titles *t, int pid, const char *comm, const char *title,
			   size_t len, bool forked, int64_t ns, bool live)
{
	struct exit_title *x;
	long pos;

	len = strnlen(title, len < TITLES_EXIT_TITLE_MAX ? len : TITLES_EXIT_TITLE_MAX);
	pos = find(t, pid);
	/* An entry read while it lived keeps that read; one without labels,
	 * with provisional ones, or stale (another process's, the pid reused)
	 * takes these. */
	if (pos >= 0 && (!t->v[pos].read || t->v[pos].provisional || t->v[pos].stale)) {
		if (live)
			use_live_title(t, &t->v[pos], comm, title, len, forked, ns);
		else
			use_exit_title(t, &t->v[pos], comm, title, len, forked, ns);
		return;
	}
	if (pos >= 0)
		return;
	if (!t->exits) {
		t->exits = calloc(TITLES_EXITS, sizeof(*t->exits));
		if (!t->exits)
			return;
	}
	x = exit_find(t, pid);
	/* What it said as it exited stands: a live title after it (a first
	 * sample between exit_group and the teardown's flag) is older news. */
	if (x && live && !x->live)
		return;
	if (!x) {
		struct htab_slot *slot;

		/* The oldest goes: the ring, and so its index, holds at most
		 * TITLES_EXITS. */
		x = &t->exits[t->exit_next];
		t->exit_next = (t->exit_next + 1) % TITLES_EXITS;
		if (x->pid)
			exit_drop(t, x);
		if (htab__reserve(&t->exit_index))
			return;
		htab__find(&t->exit_index, hash__pid(pid), exit_pid_eq, t, &pid, &slot);
		htab__set(&t->exit_index, slot, hash__pid(pid), (size_t)(x - t->exits));
	}
	x->pid = pid;
	snprintf(x->comm, sizeof(x->comm), "%s", comm);
	memcpy(x->title, title, len);
	x->len = len;
	x->forked = forked;
	x->live = live;
	x->exit_ns = ns;
	x->gone_ns = 0;
}

void titles__exit_title(struct titles *t, int pid, const char *comm, const char *title,
			size_t len, bool forked, int64_t exit_ns)
{
	if (!t || pid <= 0)
		return;
	t->st.exit_titles++;
	reported_title(t, pid, comm, title, len, forked, exit_ns, false);
}

void titles__live_title(struct titles *t, int pid, const char *comm, const char *title,
			size_t len, bool forked, int64_t read_ns)
{
	if (!t || pid <= 0)
		return;
	t->st.live_titles++;
	reported_title(t, pid, comm, title, len, forked, read_ns, true);
}

/* Did the process that called exit_group at exit_ns do what happened at
 * event_ns?  Pids are handed out in turn: for another process to have its
 * pid within TITLES_SAME_PROCESS_NS, pid_max forks would have to come in
 * between. */
static bool same_process(int64_t exit_ns, int64_t event_ns)
{
	return exit_ns > 0 && event_ns > exit_ns && event_ns - exit_ns < TITLES_SAME_PROCESS_NS;
}

void titles__stale(struct titles *t, int pid, int64_t event_ns)
{
	long pos = t ? find(t, pid) : -1;
	struct exit_title *x = t ? exit_find(t, pid) : NULL;

	/* Sampled after its exit_group, as it tears its memory down (reported
	 * as a new process since 6.16, whose sched_process_exit comes first):
	 * what it said as it exited is still its own. */
	if ((x && !x->live && same_process(x->exit_ns, event_ns)) ||
	    (pos >= 0 && same_process(t->v[pos].exit_ns, event_ns)))
		return;
	/* A new process has the pid now: what the old one said is not its. */
	if (x)
		exit_drop(t, x);

	if (pos >= 0) {
		t->v[pos].stale = true;
		t->v[pos].exited = false;
		t->v[pos].exit_ns = 0;
		t->v[pos].gone_ns = 0;
		if (event_ns)
			t->v[pos].pg = 0;
	}
}

void titles__exited(struct titles *t, int pid, int64_t now_ns)
{
	long pos = t ? find(t, pid) : -1;
	struct exit_title *x;

	if (pos >= 0) {
		t->v[pos].exited = true;
		if (!t->v[pos].gone_ns)
			t->v[pos].gone_ns = now_ns > 0 ? now_ns : 1;
		return;
	}
	/* Not looked up yet, its live title waiting: the entry it makes must
	 * know the process is gone, or nothing would expire it. */
	x = t ? exit_find(t, pid) : NULL;
	if (x && x->live && !x->gone_ns)
		x->gone_ns = now_ns > 0 ? now_ns : 1;
}

void titles__expire(struct titles *t, int64_t before_ns)
{
	for (size_t i = 0; t && i < t->n;) {
		struct title_entry *e = &t->v[i];
		size_t last = t->n - 1;

		if (!e->gone_ns || e->gone_ns >= before_ns) {
			i++;
			continue;
		}
		/* Swap-remove: the last entry moves to i, which is looked at again. */
		htab__remove(&t->index, hash__pid(e->pid), i);
		if (i != last) {
			t->v[i] = t->v[last];
			htab__move(&t->index, hash__pid(t->v[i].pid), last, i);
		}
		t->n--;
		t->st.expired++;
	}
}

void titles__stats(const struct titles *t, struct titles_stats *st)
{
	*st = t->st;
	st->processes = t->n;
}
