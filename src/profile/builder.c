// SPDX-License-Identifier: BSD-2-Clause
/*
 * builder: the builder thread: profiles symbolized, built and encoded off the loop (the
 * contract: builder.h).
 */
#define _GNU_SOURCE	/* pthread_setname_np */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "profile/builder.h"

struct bjob {
	builder_run_fn run;
	builder_done_fn done;
	void *arg;
	int err;
	struct bjob *next;
};

struct builder {
	pthread_t thread;
	bool started;
	int efd;			/* the thread -> the loop: jobs finished */
	struct event *ev;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* Under lock: */
	struct bjob *todo, **todo_tail;
	struct bjob *finished, **finished_tail;
	bool stopping;
	uint64_t jobs_done, busy_ns, cpu_ns;
	int queued;
	/* PROFD_FAULT_BUILD_DELAY_MS: each job waits this long first, so tests
	 * can show that a slow build does not hold the loop. */
	long delay_ms;
};

static void *builder_main(void *arg)
{
	struct builder *b = arg;
	uint64_t one = 1;

	/* Not reniced: at nice 10 the build's share against the busy
	 * processes being profiled (the usual reason to profile) fell to a few
	 * percent of a CPU, and a 2 s profile took 12 s to answer. */
	pthread_mutex_lock(&b->lock);
	for (;;) {
		struct bjob *j;
		int64_t t0, c0;

		while (!b->todo && !b->stopping)
			pthread_cond_wait(&b->cond, &b->lock);
		if (b->stopping)
			break;
		j = b->todo;
		b->todo = j->next;
		if (!b->todo)
			b->todo_tail = &b->todo;
		pthread_mutex_unlock(&b->lock);

		t0 = clock__mono_ns();
		c0 = clock__thread_cpu_ns();
		if (b->delay_ms > 0)
			nanosleep(&(struct timespec){b->delay_ms / 1000, b->delay_ms % 1000 * 1000000},
				  NULL);
		j->err = j->run(j->arg);
		j->next = NULL;

		pthread_mutex_lock(&b->lock);
		b->busy_ns += clock__mono_ns() - t0;
		b->cpu_ns += clock__thread_cpu_ns() - c0;
		*b->finished_tail = j;
		b->finished_tail = &j->next;
		/* A full counter (never, in practice) still wakes the loop. */
		if (write(b->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			log__warn("builder: waking the loop: %m");
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

/* Hand finished jobs back, outside the lock: done() may submit more. */
static void deliver(struct builder *b)
{
	struct bjob *j;

	pthread_mutex_lock(&b->lock);
	j = b->finished;
	b->finished = NULL;
	b->finished_tail = &b->finished;
	pthread_mutex_unlock(&b->lock);
	while (j) {
		struct bjob *next = j->next;

		pthread_mutex_lock(&b->lock);
		b->queued--;
		b->jobs_done++;
		pthread_mutex_unlock(&b->lock);
		j->done(j->arg, j->err);
		free(j);
		j = next;
	}
}

static void on_finished(evutil_socket_t fd, short what, void *arg)
{
	uint64_t n;

	(void)what;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log__warn("builder: %m");
	deliver(arg);
}

int builder__new(struct event_base *base, long fault_delay_ms, struct builder **out)
{
	struct builder *b = calloc(1, sizeof(*b));
	sigset_t all, old;
	int err;

	if (!b)
		return -ENOMEM;
	b->efd = -1;
	b->todo_tail = &b->todo;
	b->finished_tail = &b->finished;
	b->delay_ms = fault_delay_ms;
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->efd < 0) {
		err = -errno;
		goto cleanup;
	}
	b->ev = event_new(base, b->efd, EV_READ | EV_PERSIST, on_finished, b);
	if (!b->ev || event_add(b->ev, NULL)) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* Signals are the loop's to handle: the thread starts with them blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&b->thread, NULL, builder_main, b);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto cleanup;
	b->started = true;
	pthread_setname_np(b->thread, "profd-build");
	*out = b;
	return 0;
cleanup:
	builder__free(b);
	return err;
}

int builder__submit(struct builder *b, builder_run_fn run, builder_done_fn done, void *arg)
{
	struct bjob *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->run = run;
	j->done = done;
	j->arg = arg;
	pthread_mutex_lock(&b->lock);
	*b->todo_tail = j;
	b->todo_tail = &j->next;
	b->queued++;
	pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
	return 0;
}

void builder__stats(struct builder *b, struct builder_stats *st)
{
	pthread_mutex_lock(&b->lock);
	st->jobs_done = b->jobs_done;
	st->busy_ns = b->busy_ns;
	st->cpu_ns = b->cpu_ns;
	st->queued = b->queued;
	pthread_mutex_unlock(&b->lock);
}

void builder__free(struct builder *b)
{
	struct bjob *j;

	if (!b)
		return;
	if (b->started) {
		pthread_mutex_lock(&b->lock);
		b->stopping = true;
		pthread_cond_signal(&b->cond);
		pthread_mutex_unlock(&b->lock);
		pthread_join(b->thread, NULL);
	}
	deliver(b);
	/* Never ran: their owners still free what they hold. */
	while ((j = b->todo)) {
		b->todo = j->next;
		j->done(j->arg, -ECANCELED);
		free(j);
	}
	if (b->ev)
		event_free(b->ev);
	if (b->efd >= 0)
		close(b->efd);
	pthread_cond_destroy(&b->cond);
	pthread_mutex_destroy(&b->lock);
	free(b);
}
