// SPDX-License-Identifier: BSD-2-Clause
/*
 * debuginfod: asking never waits, whatever the server does.  Servers here
 * are sockets of the test's own: one that answers every request with a
 * file, and one that accepts connections (the kernel does, into the listen
 * backlog) and never answers.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock.h"
#include "symbolizer/debuginfod.h"

#define ID1 "1111111111111111111111111111111111111111"
#define ID2 "2222222222222222222222222222222222222222"
#define BODY "not really ELF, but libdebuginfod doesn't look"
#define MS 1000000ll

static char cache_dir[] = "/tmp/profd-dbgd-test.XXXXXX";
static int listen_fd = -1;
static pthread_t server;
static bool server_started;

static void setup(void)
{
	cr_assert_not_null(mkdtemp(cache_dir));
	setenv("DEBUGINFOD_CACHE_PATH", cache_dir, 1);
	unsetenv("DEBUGINFOD_MAXTIME");
}

static void teardown(void)
{
	char cmd[128];

	if (server_started) {
		shutdown(listen_fd, SHUT_RDWR);
		pthread_join(server, NULL);
	}
	if (listen_fd >= 0)
		close(listen_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", cache_dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(debuginfod, .init = setup, .fini = teardown, .timeout = 60);

/* A listening socket on 127.0.0.1 and DEBUGINFOD_URLS naming it. */
static void listen_here(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	char url[64];

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(listen_fd, 0);
	cr_assert_eq(bind(listen_fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(listen_fd, 128), 0);
	cr_assert_eq(getsockname(listen_fd, (struct sockaddr *)&a, &len), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	setenv("DEBUGINFOD_URLS", url, 1);
}

/* Every request gets BODY, until teardown shuts the socket down. */
static void *serve_body(void *arg)
{
	char req[4096], resp[256];
	int c;

	while ((c = accept(listen_fd, NULL, NULL)) >= 0) {
		if (read(c, req, sizeof(req)) > 0) {
			int n = snprintf(resp, sizeof(resp),
					 "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
					 "Connection: close\r\n\r\n%s",
					 strlen(BODY), BODY);

			cr_expect_eq(write(c, resp, n), n);
		}
		close(c);
	}
	return NULL;
}

/* The next generation after gen, waiting at most ms: its time in ns. */
static int64_t wait_generation(struct debuginfod *d, uint64_t gen, int ms)
{
	int64_t start = clock__mono_ns();

	while (debuginfod__generation(d) == gen) {
		cr_assert_lt(clock__mono_ns() - start, ms * MS, "no fetch ended in %d ms", ms);
		usleep(10000);
	}
	return clock__mono_ns() - start;
}

Test(debuginfod, off_without_urls)
{
	struct debuginfod *d = (void *)1;
	struct debuginfod_stats st;
	char path[256];
	int64_t retry;

	unsetenv("DEBUGINFOD_URLS");
	cr_assert_eq(debuginfod__new(&d), 0);
	cr_assert_null(d);
	setenv("DEBUGINFOD_URLS", "", 1);
	cr_assert_eq(debuginfod__new(&d), 0);
	cr_assert_null(d);
	cr_assert_eq(debuginfod__request(d, ID1, path, sizeof(path), &retry), -ENOSYS);
	cr_assert_eq(debuginfod__generation(d), 0);
	debuginfod__stats(d, &st);
	cr_assert_eq(st.requests + st.found + st.failed + st.pending, 0);
	debuginfod__free(d);
}

Test(debuginfod, fetched_file_is_found_later)
{
	struct debuginfod *d;
	struct debuginfod_stats st;
	char path[4096], buf[256] = "";
	int64_t retry = 0;
	uint64_t gen;
	FILE *f;

	listen_here();
	cr_assert_eq(pthread_create(&server, NULL, serve_body, NULL), 0);
	server_started = true;
	cr_assert_eq(debuginfod__new(&d), 0);
	cr_assert_not_null(d);
	gen = debuginfod__generation(d);
	cr_assert_eq(debuginfod__request(d, ID1, path, sizeof(path), &retry), -EINPROGRESS);
	wait_generation(d, gen, 10000);
	cr_assert_eq(debuginfod__request(d, ID1, path, sizeof(path), &retry), 0);
	cr_assert(strstr(path, ID1), "path %s names no build ID", path);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	cr_assert_str_eq(buf, BODY);
	debuginfod__stats(d, &st);
	cr_assert_eq(st.requests, 1);
	cr_assert_eq(st.found, 1);
	cr_assert_eq(st.failed, 0);
	cr_assert_eq(st.pending, 0);
	/* The caller found it unusable: not offered again for a while. */
	debuginfod__reject(d, ID1);
	cr_assert_eq(debuginfod__request(d, ID1, path, sizeof(path), &retry), -ENOENT);
	cr_assert_gt(retry, clock__mono_ns() + (DEBUGINFOD_RETRY_S - 10) * 1000 * MS);
	debuginfod__free(d);
}

/* A server that never answers: asking stays instant, the queue is bounded,
 * and freeing cuts the stuck fetch off instead of waiting for it. */
Test(debuginfod, hanging_server_never_blocks)
{
	struct debuginfod *d;
	struct debuginfod_stats st;
	char path[256], id[64];
	int64_t retry, t, worst = 0;
	int err, accepted = 0;

	listen_here();
	cr_assert_eq(debuginfod__new(&d), 0);
	cr_assert_not_null(d);
	for (int i = 0; i < 2 * DEBUGINFOD_QUEUE_MAX; i++) {
		snprintf(id, sizeof(id), "%040x", i + 1);
		t = clock__mono_ns();
		err = debuginfod__request(d, id, path, sizeof(path), &retry);
		t = clock__mono_ns() - t;
		worst = t > worst ? t : worst;
		if (err == -EAGAIN)
			break;
		cr_assert_eq(err, -EINPROGRESS, "request %d: %d", i, err);
		accepted++;
		/* Asking again neither waits nor queues it twice. */
		cr_assert_eq(debuginfod__request(d, id, path, sizeof(path), &retry), -EINPROGRESS);
		if (i == 0)
			usleep(200000);	/* time for the worker to take it */
	}
	cr_assert_eq(err, -EAGAIN, "the queue took %d IDs", accepted);
	/* A full queue, plus the one in flight if the worker took it already. */
	cr_assert(accepted == DEBUGINFOD_QUEUE_MAX || accepted == DEBUGINFOD_QUEUE_MAX + 1,
		  "the queue took %d IDs", accepted);
	cr_assert_lt(worst, 50 * MS, "a request took %lld ms", (long long)(worst / MS));
	debuginfod__stats(d, &st);
	cr_assert_eq(st.requests, (uint64_t)accepted);
	cr_assert_eq(st.pending, (uint64_t)accepted);
	cr_assert_eq(st.found + st.failed, 0);
	t = clock__mono_ns();
	debuginfod__free(d);
	t = clock__mono_ns() - t;
	cr_assert_lt(t, 3000 * MS, "free waited %lld ms for the hung fetch", (long long)(t / MS));
}

/* DEBUGINFOD_MAXTIME bounds a fetch; after a server stopped answering, the
 * next ID fails at once instead of waiting out the limit again. */
Test(debuginfod, time_limit_then_back_off)
{
	struct debuginfod *d;
	struct debuginfod_stats st;
	char path[256];
	int64_t retry, took;
	uint64_t gen;

	listen_here();
	setenv("DEBUGINFOD_MAXTIME", "1", 1);
	cr_assert_eq(debuginfod__new(&d), 0);
	gen = debuginfod__generation(d);
	cr_assert_eq(debuginfod__request(d, ID1, path, sizeof(path), &retry), -EINPROGRESS);
	took = wait_generation(d, gen, 10000);
	cr_assert_geq(took, 900 * MS, "given up after %lld ms, before the limit",
		      (long long)(took / MS));
	cr_assert_eq(debuginfod__request(d, ID1, path, sizeof(path), &retry), -ENOENT);
	gen = debuginfod__generation(d);
	cr_assert_eq(debuginfod__request(d, ID2, path, sizeof(path), &retry), -EINPROGRESS);
	took = wait_generation(d, gen, 10000);
	cr_assert_lt(took, 500 * MS, "the second ID waited %lld ms", (long long)(took / MS));
	cr_assert_eq(debuginfod__request(d, ID2, path, sizeof(path), &retry), -ENOENT);
	debuginfod__stats(d, &st);
	cr_assert_eq(st.requests, 2);
	cr_assert_eq(st.failed, 2);
	cr_assert_eq(st.found + st.pending, 0);
	debuginfod__free(d);
}
