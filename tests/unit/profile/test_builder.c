// SPDX-License-Identifier: BSD-2-Clause
/*
 * The builder thread: a job runs off the loop's thread while the loop
 * keeps running its timers, done() comes back on the loop's thread with
 * run()'s result, jobs run in order, and freeing hands back the ones that
 * never ran with -ECANCELED.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include <event2/event.h>

#include "profile/builder.h"

struct slow {
	pthread_t loop_thread;
	atomic_bool release;	/* the job returns once this is set */
	atomic_bool ran_off_loop;
	int ticks;		/* the loop's timer, while the job ran */
	int done_err;
	bool done_on_loop;
	int order[4], norder;
	struct event_base *base;
};

static int slow_run(void *arg)
{
	struct slow *s = arg;

	atomic_store(&s->ran_off_loop, !pthread_equal(pthread_self(), s->loop_thread));
	while (!atomic_load(&s->release))
		usleep(1000);
	return -E2BIG;
}

static void slow_done(void *arg, int err)
{
	struct slow *s = arg;

	s->done_err = err;
	s->done_on_loop = pthread_equal(pthread_self(), s->loop_thread);
	event_base_loopbreak(s->base);
}

/* The loop's timer: counts, and after a few ticks lets the job finish. */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct slow *s = arg;

	(void)fd;
	(void)what;
	if (++s->ticks == 5)
		atomic_store(&s->release, true);
}

Test(builder, loop_runs_while_a_job_runs)
{
	struct event_base *base = event_base_new();
	struct builder *b = NULL;
	struct slow s = {.loop_thread = pthread_self(), .base = base, .done_err = 1};
	struct event *tick = event_new(base, -1, EV_PERSIST, on_tick, &s);

	cr_assert_eq(builder__new(base, 0, &b), 0);
	event_add(tick, &(struct timeval){0, 10000});
	cr_assert_eq(builder__submit(b, slow_run, slow_done, &s), 0);
	event_base_dispatch(base);
	/* The job could only end after the loop ticked 5 times meanwhile. */
	cr_assert_geq(s.ticks, 5);
	cr_assert(atomic_load(&s.ran_off_loop));
	cr_assert(s.done_on_loop);
	cr_assert_eq(s.done_err, -E2BIG);
	struct builder_stats st;
	builder__stats(b, &st);
	cr_assert_eq(st.jobs_done, 1);
	cr_assert_eq(st.queued, 0);
	event_free(tick);
	builder__free(b);
	event_base_free(base);
}

struct ordered {
	struct slow *s;
	int id;
};

static int ordered_run(void *arg)
{
	struct ordered *o = arg;

	if (o->id == 0)
		atomic_store(&o->s->ran_off_loop, true);
	if (o->id == 0)
		while (!atomic_load(&o->s->release))
			usleep(1000);
	return o->id;
}

static void ordered_done(void *arg, int err)
{
	struct ordered *o = arg;

	o->s->order[o->s->norder++] = err;
	if (o->s->norder == 3)
		event_base_loopbreak(o->s->base);
}

Test(builder, jobs_in_order)
{
	struct event_base *base = event_base_new();
	struct builder *b = NULL;
	struct slow s = {.loop_thread = pthread_self(), .base = base, .release = true};
	struct ordered o[3] = {{&s, 0}, {&s, 1}, {&s, 2}};

	cr_assert_eq(builder__new(base, 0, &b), 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(builder__submit(b, ordered_run, ordered_done, &o[i]), 0);
	event_base_dispatch(base);
	cr_assert_eq(s.norder, 3);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(s.order[i], i);
	builder__free(b);
	event_base_free(base);
}

static void *release_later(void *arg)
{
	struct slow *s = arg;

	usleep(300000);
	atomic_store(&s->release, true);
	return NULL;
}

Test(builder, free_cancels_what_never_ran)
{
	struct event_base *base = event_base_new();
	struct builder *b = NULL;
	struct slow s = {.loop_thread = pthread_self(), .base = base};
	struct ordered o[3] = {{&s, 0}, {&s, 1}, {&s, 2}};

	cr_assert_eq(builder__new(base, 0, &b), 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(builder__submit(b, ordered_run, ordered_done, &o[i]), 0);
	/* Job 0 is running (it waits for release): free while it does, and
	 * release it well after freeing began, from another thread. */
	while (!atomic_load(&s.ran_off_loop))
		usleep(1000);
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, release_later, &s), 0);
	builder__free(b);
	pthread_join(t, NULL);
	cr_assert_eq(s.norder, 3);
	cr_assert_eq(s.order[0], 0);	/* it ran: its own result */
	cr_assert_eq(s.order[1], -ECANCELED);
	cr_assert_eq(s.order[2], -ECANCELED);
	event_base_free(base);
}
