// SPDX-License-Identifier: BSD-2-Clause
/*
 * Names another user chooses, with bytes that are not UTF-8 and control
 * characters in them: run as `hostile_names TITLE THREAD_NAME PADDING`.
 * It takes TITLE as its process title (written over its argv, as postgres
 * does; PADDING makes the room), names a second thread THREAD_NAME
 * (pthread_setname_np: the thread's comm, 15 bytes at most), and both
 * threads burn CPU in functions of their own until killed.  Its file name
 * is the test's to choose.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void hot_named_thread(void)
{
	for (;;)
		sink++;
}

static void *thread_main(void *arg)
{
	(void)arg;
	hot_named_thread();
	return NULL;
}

__attribute__((noinline)) static void hot_titled_main(void)
{
	for (;;)
		sink += 2;
}

int main(int argc, char **argv)
{
	char title[512], tname[16];
	pthread_t t;
	size_t room;

	if (argc < 4) {
		fprintf(stderr, "usage: hostile_names TITLE THREAD_NAME PADDING\n");
		return 2;
	}
	snprintf(title, sizeof(title), "%s", argv[1]);
	snprintf(tname, sizeof(tname), "%s", argv[2]);
	if (pthread_create(&t, NULL, thread_main, NULL) || pthread_setname_np(t, tname)) {
		fprintf(stderr, "hostile_names: cannot start the named thread\n");
		return 1;
	}
	/* The arguments are contiguous: the title goes over all of them. */
	room = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) - argv[0]);
	memset(argv[0], 0, room);
	memcpy(argv[0], title, strlen(title) < room ? strlen(title) : room - 1);
	/* Others read it (/proc/PID/cmdline): not dead stores. */
	__asm__ volatile("" : : "r"(argv[0]) : "memory");
	hot_titled_main();
	return 0;
}
