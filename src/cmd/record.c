// SPDX-License-Identifier: BSD-2-Clause
/* profd record: one profile of the targets (CPU, off-CPU, wall-clock, heap), to a file. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/env.h"
#include "cmd/pipeline.h"
#include "cpu/sampler.h"
#include "heap/heap.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "pprof/pprof.h"
#include "tracer/bpfobj.h"
#include "profile/labels.h"
#include "profile/source.h"
#include "render/render.h"
#include "symbolizer/symbolizer.h"

#define RECORD_MAX_SECONDS 86400

struct record {
	struct event_base *base;
	FILE *out;
	const char *out_path;
	bool created;		/* out_path did not exist: ours to remove on failure */
	enum render_format format;
	unsigned labels;
	const char *split;	/* render_opts.split */
	int err;
	struct symbolizer *sym;	/* profiles are built on the loop's thread, with this */
	struct session *session;
	struct heap *heap;
	struct event *heap_timer;
};

static void record_usage(FILE *f)
{
	fprintf(f,
		"usage: profd record [--pid PID]... [--exe NAME_OR_PATH]... [--seconds N]\n"
		"                    [--frequency HZ] [--format pprof|folded|svg] [-o FILE]\n"
		"                    [--heap[-all-processes] [--heap-sample-bytes N] | --off-cpu\n"
		"                    | --wall]\n"
		"                    [--labels LIST]\n"
		"                    [--split LABEL]\n"
		"\n"
		"  --pid PID        profile this process, its threads and children forked later\n"
		"  --exe NAME|PATH  profile every process running this executable, now or later\n"
		"                   (no --pid and no --exe: the whole system)\n"
		"  --seconds N      how long to profile (default 10; Ctrl-C stops early)\n"
		"  --frequency HZ   samples per second per CPU, %d..%d (default 99)\n"
		"  --format F       pprof (gzipped protobuf, default), folded (collapsed stacks)\n"
		"                   or svg (an interactive flamegraph)\n"
		"  -o FILE          output file (default profile.pb.gz for pprof, stdout otherwise)\n"
		"  --heap           a heap profile instead: allocations made during the window\n"
		"                   and what is still live at its end (uprobes on malloc & co.,\n"
		"                   in the targets' memory only)\n"
		"  --heap-all-processes  --heap, with one probe per allocator that every process\n"
		"                   traps on (the BPF side keeps the targets')\n"
		"  --heap-sample-bytes N  mean bytes between sampled allocations (default %u)\n"
		"  --off-cpu        an off-CPU profile instead: where the targets' threads\n"
		"                   blocked (sleeps, I/O, locks) and for how long; folded and\n"
		"                   svg show nanoseconds\n"
		"  --off-cpu-period-us N  off-CPU time a kept switch stands for on average, in\n"
		"                   microseconds: smaller keeps more stacks (default 10000)\n"
		"  --wall           a wall-clock profile instead: on-CPU samples (at --frequency)\n"
		"                   and off-CPU time (blocked, or preempted and waiting for a\n"
		"                   CPU) in the same units, so each thread's stacks add up to\n"
		"                   its time; folded and svg show nanoseconds\n"
		"  --labels LIST    the labels samples carry, comma-separated: pid, tid,\n"
		"                   thread_name, process_name, backend_type, database, user,\n"
		"                   default, all (default: process_name, backend_type,\n"
		"                   database, user)\n"
		"  --split LABEL    folded and svg: the label whose values are the root level\n"
		"                   (process_name, thread_name, backend_type, database, user,\n"
		"                   wait_event (off-CPU and wall: postgres's wait events),\n"
		"                   state (wall: cpu, runqueue, sleep) or none; default\n"
		"                   process_name)\n"
		"  --log-level L    error, warn, info (default; debug with PROFD_DEBUG) or debug\n"
		"  --log-format F   text (default), logfmt or json\n"
		"  --scratch-dir D  where debug files with compressed DWARF are inflated for\n"
		"                   libdw to map (default %s; \"\": in memory)\n",
		SAMPLER_MIN_FREQ, SAMPLER_MAX_FREQ, HEAP_DEFAULT_SAMPLE_BYTES, symbolizer__scratch_dir());
}

static int write_all(FILE *f, const void *data, size_t len)
{
	if (fwrite(data, 1, len, f) != len || fflush(f))
		return -errno ?: -EIO;
	return 0;
}

/*
 * Build src's profile (both halves at once: record has no builder thread)
 * and write it in the chosen format; value names the sample type folded
 * and svg show.
 */
static int write_profile(struct record *r, struct profile_source *src, const char *value,
			 const char *title)
{
	struct render_opts ro = {.format = r->format, .gzip = true, .value = value, .title = title,
				 .split = r->split};
	struct pprof *p = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	err = profile_source__pprof(src, r->sym, &p);
	if (err) {
		log__error("%s failed: %s", src->ops->building, strerror(-err));
		return err;
	}
	err = render__profile(p, &ro, &buf, &len);
	err = err ?: write_all(r->out, buf, len);
	if (err)
		log__error("writing %s failed: %s", r->out_path, strerror(-err));
	free(buf);
	pprof__free(p);
	return err;
}

/* What folded and svg show of each kind of session's profile, and its title. */
static const struct {
	const char *value, *title;
} shown[SESSION_KINDS] = {
	[SESSION_CPU] = {"samples", "CPU flamegraph"},
	[SESSION_OFFCPU] = {"offcpu", "Off-CPU flamegraph"},
	[SESSION_WALL] = {"time", "Wall-clock flamegraph"},
};

static void on_session_done(struct session *s, void *ctx)
{
	struct record *r = ctx;
	struct session_stats st;
	int err;

	session__stats(s, &st);
	err = write_profile(r, session__source(s), shown[st.kind].value, shown[st.kind].title);
	if (!err && st.kind != SESSION_CPU)
		log__info("wrote %s: %llu stacks kept of %llu %sswitches in %.1f s, %llu lost, "
			  "%llu still off CPU at the end (counted up to it)",
			  r->out_path, (unsigned long long)st.kept,
			  (unsigned long long)st.switches,
			  st.kind == SESSION_OFFCPU ? "blocked " : "", st.duration_ns / 1e9,
			  (unsigned long long)(st.switch_lost_ringbuf + st.switch_lost_threads +
					       st.lost_unjoined),
			  (unsigned long long)st.unended);
	/* A wall-clock session's samples count its joined switches too. */
	if (!err && st.kind != SESSION_OFFCPU)
		log__info("wrote %s: %llu samples%s in %.1f s at %d Hz, %llu lost", r->out_path,
			  (unsigned long long)st.samples,
			  st.kind == SESSION_WALL ? " and switches" : "", st.duration_ns / 1e9,
			  st.frequency, (unsigned long long)(st.lost_ringbuf + st.lost_procs));
	r->err = err;
	event_base_loopbreak(r->base);
}

/* --heap: the window is over; write allocations made in it and what is live. */
static void on_heap_done(evutil_socket_t fd, short what, void *ctx)
{
	struct record *r = ctx;
	struct profile_source *src = NULL;
	struct heap_stats st;
	int err;

	heap__stats(r->heap, &st);
	err = heap__source(r->heap, "inuse_space", r->labels, &src);
	if (err)
		log__error("building the heap profile failed: %s", strerror(-err));
	err = err ?: write_profile(r, src, "inuse_space", "Heap in use (bytes)");
	if (!err)
		log__info("wrote %s: %llu allocations sampled, %llu freed, %zu allocator objects "
			  "probed in %zu processes, %llu probe hits, %llu stack errors",
			  r->out_path, (unsigned long long)st.sampled, (unsigned long long)st.freed,
			  st.objects_probed, st.processes_probed, (unsigned long long)st.calls,
			  (unsigned long long)st.stack_errors);
	profile_source__free(src);
	r->err = err;
	event_base_loopbreak(r->base);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct record *r = arg;

	/* Like perf record: Ctrl-C ends the profile early and still writes it. */
	if (r->heap)
		event_active(r->heap_timer, EV_TIMEOUT, 0);
	else
		session__stop(r->session);
}

int record__main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"exe", required_argument, NULL, 'e'},
		{"seconds", required_argument, NULL, 's'},
		{"frequency", required_argument, NULL, 'F'},
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"heap", no_argument, NULL, 'H'},
		{"heap-all-processes", no_argument, NULL, 'A'},
		{"heap-sample-bytes", required_argument, NULL, 'B'},
		{"off-cpu", no_argument, NULL, 'O'},
		{"off-cpu-period-us", required_argument, NULL, 'P'},
		{"wall", no_argument, NULL, 'W'},
		{"labels", required_argument, NULL, 'L'},
		{"split", required_argument, NULL, 'S'},
		{"log-level", required_argument, NULL, 'V'},
		{"log-format", required_argument, NULL, 'J'},
		{"scratch-dir", required_argument, NULL, 'D'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct record r = {.format = RENDER_PPROF, .labels = LABELS_DEFAULT};
	unsigned split_bit = 0;
	struct targets tl = {};
	struct pipeline pl = {};
	struct env env;
	struct event *sigint = NULL, *sigterm = NULL;
	long seconds = 10, freq = 99, heap_bytes = HEAP_DEFAULT_SAMPLE_BYTES, period_us = 0;
	bool heap = false, heap_all = false, offcpu = false, wall = false, freq_set = false;
	char errbuf[256];
	int opt, err = 0, lv;

	env__read(&env);
	if (env.debug)
		log__set_level(LOG_LVL_DEBUG);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "p:e:s:F:f:o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (cli__pid(&tl, optarg)) {
				err = -EINVAL;
				goto cleanup;
			}
			break;
		case 'e':
			if (cli__exe(&tl, optarg)) {
				err = -EINVAL;
				goto cleanup;
			}
			break;
		case 's':
			if (parse__int(optarg, 1, RECORD_MAX_SECONDS, &seconds)) {
				log__error("--seconds must be 1..%d, not '%s'", RECORD_MAX_SECONDS,
					   optarg);
				err = -EINVAL;
				goto cleanup;
			}
			break;
		case 'F':
			if (parse__int(optarg, SAMPLER_MIN_FREQ, SAMPLER_MAX_FREQ, &freq)) {
				log__error("--frequency must be %d..%d Hz, not '%s'",
					   SAMPLER_MIN_FREQ, SAMPLER_MAX_FREQ, optarg);
				err = -EINVAL;
				goto cleanup;
			}
			freq_set = true;
			break;
		case 'f':
			if (render__parse_format(optarg, &r.format)) {
				log__error("--format must be pprof, folded or svg, not '%s'", optarg);
				err = -EINVAL;
				goto cleanup;
			}
			break;
		case 'o':
			r.out_path = optarg;
			break;
		case 'A':
			heap_all = true;
			/* fall through */
		case 'H':
			heap = true;
			break;
		case 'O':
			offcpu = true;
			break;
		case 'W':
			wall = true;
			break;
		case 'P':
			err = cli__offcpu_period(optarg, &period_us);
			if (err)
				goto cleanup;
			break;
		case 'B':
			err = cli__heap_sample_bytes(optarg, &heap_bytes);
			if (err)
				goto cleanup;
			break;
		case 'L':
			err = cli__labels(optarg, &r.labels);
			if (err)
				goto cleanup;
			break;
		case 'S':
			err = labels__split(optarg, &r.split, &split_bit, errbuf, sizeof(errbuf));
			if (err) {
				log__error("--%s", errbuf);
				goto cleanup;
			}
			break;
		case 'D':
			err = cli__scratch_dir(optarg);
			if (err)
				goto cleanup;
			break;
		case 'V':
		case 'J':
			err = opt == 'V' ? cli__log_level(optarg, &lv) : cli__log_format(optarg, &lv);
			if (err)
				goto cleanup;
			if (opt == 'V')
				log__set_level(lv);
			else
				log__set_format(lv);
			break;
		case 'h':
			record_usage(stdout);
			goto cleanup;
		default:
			record_usage(stderr);
			err = -EINVAL;
			goto cleanup;
		}
	}
	if (optind < argc) {
		log__error("unexpected argument '%s' (see profd record --help)", argv[optind]);
		err = -EINVAL;
		goto cleanup;
	}
	if (period_us && !offcpu && !wall) {
		log__error("--off-cpu-period-us is for --off-cpu and --wall");
		err = -EINVAL;
		goto cleanup;
	}
	if (wall && (heap || offcpu)) {
		log__error("--wall takes no %s: a wall-clock profile holds the off-CPU time",
			   heap ? "--heap" : "--off-cpu");
		err = -EINVAL;
		goto cleanup;
	}
	if (offcpu && (heap || freq_set)) {
		log__error("--off-cpu takes no %s: off-CPU time is sampled at context switches",
			   heap ? "--heap" : "--frequency");
		err = -EINVAL;
		goto cleanup;
	}
	r.labels |= split_bit;	/* something to split by */
	if (!r.out_path)
		r.out_path = r.format == RENDER_PPROF ? "profile.pb.gz" : "-";
	/* Fail on an unwritable path now, not after the whole profile was taken. */
	if (!strcmp(r.out_path, "-")) {
		if (r.format == RENDER_PPROF && isatty(STDOUT_FILENO)) {
			log__error("refusing to write a binary profile to a terminal; use -o FILE");
			err = -EINVAL;
			goto cleanup;
		}
		r.out = stdout;
		r.out_path = "stdout";
	} else {
		/* On failure only a file we created is removed: never /dev/null
		 * or a file that was there before. */
		int fd = open(r.out_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

		r.created = fd >= 0;
		if (fd < 0 && errno == EEXIST)
			fd = open(r.out_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		r.out = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!r.out) {
			err = -errno;
			log__error("cannot write %s: %s", r.out_path, strerror(errno));
			if (fd >= 0)
				close(fd);
			goto cleanup;
		}
	}

	/* Bad targets fail now, before the BPF side is loaded for nothing. */
	err = targets__check(&tl, errbuf, sizeof(errbuf));
	if (err) {
		log__error("%s", errbuf);
		goto cleanup;
	}
	err = pipeline__open(&pl, heap, offcpu || wall, BPFOBJ_EXIT_AUTO, &env);
	if (err)
		goto cleanup;
	r.base = pl.base;
	r.sym = pl.sym;
	if (heap) {
		struct timeval tv = {seconds, 0};

		err = heap__start(pl.base, pl.obj,
				  &(struct heap_opts){.targets = &tl, .sample_bytes = heap_bytes,
						      .all_processes = heap_all},
				  &r.heap, errbuf, sizeof(errbuf));
		if (err) {
			log__error("%s", errbuf);
			goto cleanup;
		}
		r.heap_timer = evtimer_new(r.base, on_heap_done, &r);
		if (!r.heap_timer || evtimer_add(r.heap_timer, &tv)) {
			err = -ENOMEM;
			goto cleanup;
		}
	} else {
		enum session_kind kind = wall ? SESSION_WALL : offcpu ? SESSION_OFFCPU : SESSION_CPU;

		sampler__set_offcpu_period(pl.sm, (uint64_t)period_us * 1000);
		err = sampler__start(pl.sm,
				     &(struct session_opts){
					     .kind = kind,
					     .frequency = freq,
					     .seconds = seconds,
					     .targets = &tl,
					     .labels = r.labels,
					     .done = on_session_done,
					     .ctx = &r,
				     },
				     &r.session, errbuf, sizeof(errbuf));
		if (err) {
			log__error("%s", errbuf);
			goto cleanup;
		}
	}
	sigint = evsignal_new(r.base, SIGINT, on_signal, &r);
	sigterm = evsignal_new(r.base, SIGTERM, on_signal, &r);
	if (!sigint || !sigterm || event_add(sigint, NULL) || event_add(sigterm, NULL)) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (heap)
		log__info("profiling the heap of %s for %ld s", tl.npids || tl.nexes ? "targets" :
			  "every process", seconds);
	else if (offcpu)
		log__info("profiling off-CPU time of %s for %ld s", tl.npids || tl.nexes ?
			  "targets" : "the whole system", seconds);
	else if (wall)
		log__info("profiling wall-clock time of %s for %ld s at %ld Hz on CPU",
			  tl.npids || tl.nexes ? "targets" : "the whole system", seconds, freq);
	else
		log__info("profiling %s for %ld s at %ld Hz", tl.npids || tl.nexes ? "targets" :
			  "the whole system", seconds, freq);
	event_base_dispatch(r.base);
	err = r.err;
cleanup:
	session__free(r.session);
	heap__free(r.heap);
	if (r.heap_timer)
		event_free(r.heap_timer);
	if (sigint)
		event_free(sigint);
	if (sigterm)
		event_free(sigterm);
	pipeline__close(&pl);
	if (r.out && r.out != stdout) {
		if (fclose(r.out) && !err)
			err = -errno;
		if (err && r.created)
			unlink(r.out_path);
	}
	targets__free(&tl);
	return err ? 1 : 0;
}
