// SPDX-License-Identifier: BSD-2-Clause
/* metrics: /metrics' table, one row per metric (metrics.h). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "cpu/sampler.h"
#include "cpu/unwind.h"
#include "heap/heap.h"
#include "lib/buildinfo.h"
#include "lib/clock.h"
#include "lib/stagecpu.h"
#include "proc/procs.h"
#include "proc/titles.h"
#include "profile/builder.h"
#include "profile/memgov.h"
#include "server/metrics.h"
#include "symbolizer/symbolizer.h"
#include "tracer/bpfobj.h"
#include "tracer/kernel.h"
#include "tracer/stackcopy.h"

/* Entries of /proc/self/fd, less the one reading it. */
static uint64_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	uint64_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n ? n - 1 : 0;
}

/* Resident memory, from /proc/self/statm: 0 if it cannot be read. */
static uint64_t resident_bytes(void)
{
	unsigned long long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

enum metric_unit {
	METRIC_COUNT,
	METRIC_SECONDS,	/* value in nanoseconds, shown in seconds */
};

struct metric {
	const char *name;	/* with its labels, if any: name{label="v"} */
	const char *type, *help;
	uint64_t value;
	enum metric_unit unit;
};

/* One metric in the text format; HELP and TYPE once per family (a row
 * whose name before '{' is the previous row's shares them). */
static int metric_print(struct evbuffer *buf, const struct metric *m, const struct metric *prev)
{
	size_t fam = strcspn(m->name, "{");
	int n = 0;

	if (!prev || strncmp(prev->name, m->name, fam) || (prev->name[fam] && prev->name[fam] != '{'))
		n = evbuffer_add_printf(buf, "# HELP %.*s %s.\n# TYPE %.*s %s\n", (int)fam, m->name,
					m->help, (int)fam, m->name, m->type);
	if (n < 0)
		return -ENOMEM;
	if (m->unit == METRIC_SECONDS)
		n = evbuffer_add_printf(buf, "%s %" PRIu64 ".%09" PRIu64 "\n", m->name,
					m->value / 1000000000u, m->value % 1000000000u);
	else
		n = evbuffer_add_printf(buf, "%s %" PRIu64 "\n", m->name, m->value);
	return n < 0 ? -ENOMEM : 0;
}

/* What the churn of processes costs, event by event: one family for the
 * counts, one for the CPU, a row per kind of event. */
static int event_metrics(struct evbuffer *buf, const struct bpfobj_event_stats *es)
{
	static const char *const kinds[BPFOBJ_EVENT_KINDS] = {
		[BPFOBJ_EV_TITLE] = "title", [BPFOBJ_EV_NEW] = "new", [BPFOBJ_EV_FORK] = "fork",
		[BPFOBJ_EV_EXEC] = "exec",   [BPFOBJ_EV_RUN] = "run", [BPFOBJ_EV_EXIT] = "exit",
		[BPFOBJ_EV_FIRST] = "first",
	};
	static const struct metric family[] = {
		{"profd_process_events_total", "counter",
		 "Process events handled: fork, exec, exit, new (sampled, unknown), run (first "
		 "sample in a new program's own text), first (first sample after an exec, when execs are "
		 "read lazily), title (a title read at exit_group)", 0, METRIC_COUNT},
		{"profd_process_event_cpu_seconds_total", "counter",
		 "CPU seconds the event loop spent on process events, by event, estimated from one "
		 "event in 16 of each kind (the proc_events stage of profd_stage_cpu_seconds_total is "
		 "their exact sum)", 0, METRIC_SECONDS},
	};
	char names[2][BPFOBJ_EVENT_KINDS][80];
	int err = 0;

	for (size_t f = 0; !err && f < 2; f++) {
		for (int k = 0; !err && k < BPFOBJ_EVENT_KINDS; k++) {
			struct metric m = family[f];

			snprintf(names[f][k], sizeof(names[f][k]), "%s{event=\"%s\"}", family[f].name,
				 kinds[k]);
			m.name = names[f][k];
			m.value = f ? es->cpu_ns[k] : es->count[k];
			err = metric_print(buf, &m, k ? &(struct metric){.name = names[f][k - 1]} : NULL);
		}
	}
	return err;
}

/* A label value as the text format wants it: backslash, quote and newline escaped. */
static void label_value(char *out, size_t len, const char *v)
{
	size_t n = 0;

	for (; *v && n + 3 < len; v++) {
		if (*v == '\\' || *v == '"' || *v == '\n')
			out[n++] = '\\';
		out[n++] = *v == '\n' ? 'n' : *v;
	}
	out[n] = 0;
}

/* profd_build_info{version=...,commit=...,...} 1: what runs, to join on. */
static void build_info_name(char *out, size_t len)
{
	const struct buildinfo *bi = buildinfo__get();
	char v[6][128];

	label_value(v[0], sizeof(v[0]), bi->version);
	label_value(v[1], sizeof(v[1]), bi->commit);
	label_value(v[2], sizeof(v[2]), bi->link);
	label_value(v[3], sizeof(v[3]), bi->sanitizer);
	label_value(v[4], sizeof(v[4]), bi->libbpf);
	label_value(v[5], sizeof(v[5]), bi->elfutils);
	snprintf(out, len,
		 "profd_build_info{version=\"%s\",commit=\"%s\",link=\"%s\",sanitizer=\"%s\","
		 "libbpf=\"%s\",elfutils=\"%s\"}",
		 v[0], v[1], v[2], v[3], v[4], v[5]);
}

int metrics__write(const struct metrics_sources *src, struct evbuffer *buf)
{
	char build_info[1024];
	struct sampler_stats st;
	struct procs_stats ps;
	struct heap_stats hs = {};
	struct debuginfod_stats ds;
	struct unwind_stats us;
	struct stackcopy_stats cs;
	struct titles_stats ts;
	struct builder_stats bs;
	struct bpfobj_event_stats es;
	struct memgov_stats ms;
	const struct stagecpu *loop = bpfobj__stagecpu(src->obj);
	int err = 0;

	/* Every figure first, then the table: each row holds its own value. */
	sampler__stats(src->sm, &st);
	procs__stats(bpfobj__procs(src->obj), &ps);
	if (src->heap)
		heap__stats(src->heap, &hs);
	symbolizer__debuginfod_stats(src->sym, &ds);
	sampler__unwind_stats(src->sm, &us);
	bpfobj__stack_stats(src->obj, &cs);
	titles__stats(bpfobj__titles(src->obj), &ts);
	builder__stats(src->builder, &bs);
	bpfobj__event_stats(src->obj, &es);
	memgov__stats(src->memgov, &ms);
	build_info_name(build_info, sizeof(build_info));

	const struct metric metrics[] = {
		{build_info, "gauge",
		 "Always 1; its labels say what runs: version (git describe), commit, link "
		 "(static or dynamic), sanitizer, and the libbpf and elfutils linked", 1,
		 METRIC_COUNT},
		/* The daemon's own cost, with the names Prometheus' clients use. */
		{"process_cpu_seconds_total", "counter",
		 "Total user and system CPU time spent in seconds", (uint64_t)clock__cpu_ns(),
		 METRIC_SECONDS},
		{"process_resident_memory_bytes", "gauge", "Resident memory size in bytes",
		 resident_bytes(), METRIC_COUNT},
		{"profd_stage_cpu_seconds_total{stage=\"drain\"}", "counter",
		 "CPU seconds by stage: drain (reading the BPF rings), proc_events (the "
		 "process-event ring: fork, exec, exit, titles at exit), unwind (user stacks), "
		 "titles (process titles read from /proc), all on the event loop's "
		 "thread, each charged once; build (profiles built and encoded, on the builder "
		 "thread)", loop->ns[BPFOBJ_STAGE_DRAIN], METRIC_SECONDS},
		{"profd_stage_cpu_seconds_total{stage=\"proc_events\"}", "counter", NULL,
		 loop->ns[BPFOBJ_STAGE_PROC_EVENTS], METRIC_SECONDS},
		{"profd_stage_cpu_seconds_total{stage=\"unwind\"}", "counter", NULL,
		 loop->ns[BPFOBJ_STAGE_UNWIND], METRIC_SECONDS},
		{"profd_stage_cpu_seconds_total{stage=\"titles\"}", "counter", NULL,
		 loop->ns[BPFOBJ_STAGE_TITLES], METRIC_SECONDS},
		{"profd_stage_cpu_seconds_total{stage=\"build\"}", "counter", NULL, bs.cpu_ns,
		 METRIC_SECONDS},
		{"profd_samples_total", "counter", "CPU samples received", st.samples, METRIC_COUNT},
		{"profd_samples_lost_total", "counter",
		 "Samples dropped because a buffer or table was full", st.lost, METRIC_COUNT},
		{"profd_samples_32bit_total", "counter",
		 "Samples of 32-bit processes (ended sessions): their user frames come from frame pointers only",
		 st.compat, METRIC_COUNT},
		{"profd_sessions_running", "gauge", "Profiling sessions running",
		 (uint64_t)st.sessions_running, METRIC_COUNT},
		{"profd_sessions_started_total", "counter", "Profiling sessions started",
		 st.sessions_started, METRIC_COUNT},
		{"profd_session_stack_bytes", "gauge",
		 "Bytes the profiling sessions' tables of distinct stacks hold, all together",
		 st.stack_bytes, METRIC_COUNT},
		{"profd_session_stack_bytes_limit", "gauge",
		 "Their bound, a quarter of max_memory_mb (0: none); past it new stacks are lost",
		 st.stack_limit, METRIC_COUNT},
		{"profd_symbolizer_cache_bytes", "gauge", "Estimated bytes held by the symbol cache",
		 symbolizer__cache_bytes(src->sym), METRIC_COUNT},
		{"profd_symbolizer_cache_objects", "gauge", "ELF objects held by the symbol cache",
		 symbolizer__cache_objects(src->sym), METRIC_COUNT},
		{"profd_symbolizer_scratch_bytes", "gauge",
		 "Bytes on disk of the inflated copies of debug files the symbol caches map (--scratch-dir; unlinked files, freed with their objects)",
		 symbolizer__scratch_bytes(), METRIC_COUNT},
		{"profd_symbolizer_objects_refused_total", "counter",
		 "ELF files another user could change whose symbol tables or DWARF would have taken more memory to read than one file may (refused, or symbolized without DWARF; the log names them)",
		 symbolizer__refused(src->sym) + symbolizer__refused(src->unwind_sym), METRIC_COUNT},
		{"profd_processes_tracked", "gauge", "Processes whose memory maps profd holds",
		 ps.processes, METRIC_COUNT},
		{"profd_processes_evicted_total", "counter",
		 "Processes dropped from the table to stay within its bound", ps.evictions, METRIC_COUNT},
		{"profd_process_maps_bytes", "gauge", "Estimated bytes held by memory-map snapshots",
		 ps.maps_bytes, METRIC_COUNT},
		{"profd_heap_sampled_total", "counter", "Heap allocations sampled", hs.sampled, METRIC_COUNT},
		{"profd_heap_probe_hits_total", "counter", "Allocator probe hits", hs.calls, METRIC_COUNT},
		{"profd_heap_objects_probed", "gauge", "ELF objects whose allocators are probed",
		 (uint64_t)hs.objects_probed, METRIC_COUNT},
		{"profd_heap_preloads_probed", "gauge",
		 "Of them, copies of libprofd_heap.so: the processes that preload one sample themselves",
		 (uint64_t)hs.preloads_probed, METRIC_COUNT},
		{"profd_heap_sites", "gauge",
		 "Allocation sites in the kernel side's site map (PROFD_HEAP_MAX_SITES, default 16384), at the last pass",
		 (uint64_t)hs.sites, METRIC_COUNT},
		{"profd_heap_site_map_full_total", "counter",
		 "Sampled allocations not counted because the site map was full (live processes' sites fill it)",
		 hs.allocs_full, METRIC_COUNT},
		{"profd_heap_live_map_full_total", "counter",
		 "Sampled allocations not tracked as live because the live map was full (PROFD_HEAP_MAX_LIVE, default 65536): missing from inuse_*, their frees unseen",
		 hs.live_full, METRIC_COUNT},
		{"profd_heap_stack_errors_total", "counter",
		 "Sampled allocations whose stack could not be stored (the stack map full, or a collision): counted at their call site only",
		 hs.stack_errors, METRIC_COUNT},
		{"profd_heap_calls_in_flight_full_total", "counter",
		 "Allocator calls not followed to their return because too many were in flight at once: a sampled one is lost",
		 hs.pending_full, METRIC_COUNT},
		{"profd_heap_sites_retired", "gauge",
		 "Sites of exited processes kept out of the site map, still in allocs profiles",
		 (uint64_t)hs.sites_retired, METRIC_COUNT},
		{"profd_heap_sites_retired_total", "counter",
		 "Sites of exited processes moved out of the site map", hs.sites_retired_total,
		 METRIC_COUNT},
		{"profd_heap_sites_dropped_total", "counter",
		 "Retired sites dropped, oldest first, to stay within 65536: their totals leave allocs profiles",
		 hs.sites_dropped, METRIC_COUNT},
		{"profd_heap_sites_kept_bytes", "gauge",
		 "Bytes held for retired sites and the identities sites are served as",
		 (uint64_t)hs.keep_bytes, METRIC_COUNT},
		{"profd_heap_objects_refused_total", "counter",
		 "Allocators not probed because every slot was taken (their processes go untracked; logged)",
		 hs.objects_refused, METRIC_COUNT},
		{"profd_heap_preload_mean_mismatch_total", "counter",
		 "Samples of libprofd_heap.so taken at another mean than --heap-sample-bytes (its PROFD_HEAP_SAMPLE_BYTES): dropped",
		 hs.preload_mean, METRIC_COUNT},
		{"profd_heap_per_process_probes", "gauge",
		 "1: the allocator probes are in the targets' memory only (other processes run their allocator untouched); 0: in every process's (whole-system tracking, --heap-all-processes, or no tracefs/kthreadd: logged)",
		 hs.per_process, METRIC_COUNT},
		{"profd_heap_processes_probed", "gauge", "Processes with allocator probes in their memory",
		 (uint64_t)hs.processes_probed, METRIC_COUNT},
		{"profd_heap_attachments", "gauge",
		 "Attachments now: one process's probes on one allocator object", (uint64_t)hs.attachments,
		 METRIC_COUNT},
		{"profd_heap_attachments_limit", "gauge",
		 "Their bound (heap_max_attach); a target past it is not tracked", (uint64_t)hs.attach_max,
		 METRIC_COUNT},
		{"profd_heap_attach_total", "counter", "Attachments made", hs.attach_made, METRIC_COUNT},
		{"profd_heap_attach_seconds_total", "counter",
		 "Time spent making them (the kernel walks every process mapping the object, each time)",
		 (uint64_t)hs.attach_ns, METRIC_SECONDS},
		{"profd_heap_attach_refused_total", "counter",
		 "Attachments refused over heap_max_attach, each attempt (a target's exec, fork and map rescans; logged once a minute)", hs.attach_refused,
		 METRIC_COUNT},
		{"profd_heap_attach_vanished_total", "counter",
		 "Attachments not made because the process had exited", hs.attach_vanished, METRIC_COUNT},
		{"profd_heap_attach_failed_total", "counter", "Attachments that failed otherwise (logged)",
		 hs.attach_failed, METRIC_COUNT},
		{"profd_heap_fork_inherited_total", "counter",
		 "Targets' children that inherited their parent's probes at fork: tracked from their first instruction",
		 hs.fork_inherited, METRIC_COUNT},
		{"profd_heap_inherit_promoted_total", "counter",
		 "Of them, given probes of their own when the target they inherited from exited or exec'd another program",
		 hs.inherit_promoted, METRIC_COUNT},
		{"profd_heap_fork_attached_total", "counter",
		 "Targets' children probed after their fork was reported (their parent had no probes to give)",
		 hs.fork_attached, METRIC_COUNT},
		{"profd_heap_fork_attach_seconds_total", "counter",
		 "Fork to probes, summed over those children: their allocations meanwhile are not seen",
		 (uint64_t)hs.fork_attach_ns, METRIC_SECONDS},
		{"profd_heap_fork_attach_max_seconds", "gauge", "The longest of those delays",
		 (uint64_t)hs.fork_attach_max_ns, METRIC_SECONDS},
		{"profd_debuginfod_requests_total", "counter",
		 "Debug files asked of the DEBUGINFOD_URLS servers", ds.requests, METRIC_COUNT},
		{"profd_debuginfod_found_total", "counter", "Debug files debuginfod gave", ds.found, METRIC_COUNT},
		{"profd_debuginfod_failed_total", "counter",
		 "debuginfod fetches that failed (missing, time limit, no server)", ds.failed, METRIC_COUNT},
		{"profd_debuginfod_pending", "gauge", "debuginfod fetches queued or running",
		 ds.pending, METRIC_COUNT},
		{"profd_unwind_table_bytes", "gauge",
		 "Bytes of the CFI row cache the unwinder works from (fixed)", us.table_bytes, METRIC_COUNT},
		{"profd_unwind_samples_total", "counter", "User stacks unwound", us.samples, METRIC_COUNT},
		{"profd_unwind_incomplete_total", "counter",
		 "User stacks that did not reach a thread's outermost frame", us.incomplete, METRIC_COUNT},
		{"profd_unwind_cfi_frames_total", "counter", "Frames unwound by CFI", us.cfi_frames, METRIC_COUNT},
		{"profd_unwind_fp_frames_total", "counter",
		 "Frames taken from the kernel side's frame-pointer walk", us.fp_frames, METRIC_COUNT},
		{"profd_stack_copy_executables", "gauge",
		 "Executables whose samples copy more than the default user stack", cs.exes, METRIC_COUNT},
		{"profd_stack_copy_raises_total", "counter",
		 "Times an executable's stack copy was raised", cs.raised, METRIC_COUNT},
		{"profd_stack_copy_fits_total", "counter",
		 "Times an executable's stack copy was cut to what its samples read", cs.fitted,
		 METRIC_COUNT},
		{"profd_process_titles", "gauge",
		 "Processes whose title labels (backend_type, ...) profd holds", ts.processes, METRIC_COUNT},
		{"profd_process_titles_expired_total", "counter",
		 "Title entries dropped because their process exited before every profile still "
		 "being taken began", ts.expired, METRIC_COUNT},
		{"profd_process_title_reads_total", "counter",
		 "Reads of a process's title from /proc (rate-limited per process)", ts.reads, METRIC_COUNT},
		{"profd_process_titles_not_postgres_total", "counter",
		 "Postgres-like titles (postgres: user db ...) of processes whose executable is not a postgres binary only root can change: given no labels",
		 ts.not_postgres, METRIC_COUNT},
		{"profd_syscalls_traced", "gauge",
		 "1 while profd's exit snapshots hang on syscalls:sys_enter_exit_group (kernels "
		 "before 6.16), which puts every syscall of every process on the kernel's traced "
		 "path; 0 where they are taken at sched_process_exit, or not at all",
		 bpfobj__features(src->obj)->exit_syscall_tp, METRIC_COUNT},
		{"profd_process_exit_titles_total", "counter",
		 "Titles the kernel side read as a process exited", ts.exit_titles,
		 METRIC_COUNT},
		{"profd_process_exit_titles_used_total", "counter",
		 "Of those, the labels of a process sampled but gone before its title was read",
		 ts.exit_titles_used, METRIC_COUNT},
		{"profd_process_live_titles_total", "counter",
		 "Titles the kernel side read at a postgres process's first sample", ts.live_titles,
		 METRIC_COUNT},
		{"profd_process_live_titles_used_total", "counter",
		 "Of those, a process's first read (no /proc read for its labels)",
		 ts.live_titles_used, METRIC_COUNT},
		{"profd_heap_probe_cost_ppm", "gauge",
		 "Cost of the heap probes over the last --heap-budget window, millionths of one CPU",
		 (uint64_t)(hs.cost_ratio * 1e6 + 0.5), METRIC_COUNT},
		{"profd_heap_detached", "gauge",
		 "1 once --heap-budget has stopped heap tracking (its probes detached)",
		 (uint64_t)hs.detached, METRIC_COUNT},
		{"profd_processes_limit", "gauge",
		 "Bound on processes tracked (config max_processes)", ps.max, METRIC_COUNT},
		{"profd_processes_exited", "gauge",
		 "Processes tracked that have exited, kept for profiles still running", ps.exited, METRIC_COUNT},
		{"profd_process_maps_reads_total", "counter",
		 "/proc/PID/maps files read (at a process's first sample, exec, or an address "
		 "outside its known mappings)", ps.maps_reads, METRIC_COUNT},
		{"profd_process_maps_overtaken_total", "counter",
		 "/proc/PID/maps reads not kept because the process exec'd again before or "
		 "during the read (its samples of that program are shown as [name])",
		 ps.overtaken, METRIC_COUNT},
		{"profd_process_maps_truncated_total", "counter",
		 "Memory-map reads cut at max_maps_bytes or max_maps_entries", ps.truncated, METRIC_COUNT},
		{"profd_symbolizer_cache_objects_limit", "gauge",
		 "Bound on ELF objects in the symbol cache (config max_objects)",
		 symbolizer__max_objects(src->sym), METRIC_COUNT},
		{"profd_open_fds", "gauge", "File descriptors the daemon has open", open_fds(), METRIC_COUNT},
		{"profd_ring_reads_cut_total", "counter",
		 "Reads of the BPF rings cut short to let the event loop run (the rest is read "
		 "on its next pass)", bpfobj__drain_cuts(src->obj), METRIC_COUNT},
		{"profd_sample_ring_bad_records_total", "counter",
		 "Records of a per-CPU sample ring whose length could not be one the kernel side "
		 "wrote: what waited on that ring was dropped (never expected)",
		 bpfobj__ring_bad_records(src->obj), METRIC_COUNT},
		{"profd_unwind_cache_bytes", "gauge",
		 "Estimated bytes held by the unwinder's own object cache (call frame information)",
		 symbolizer__cache_bytes(src->unwind_sym), METRIC_COUNT},
		{"profd_unwind_cache_objects", "gauge", "ELF objects held by the unwinder's cache",
		 symbolizer__cache_objects(src->unwind_sym), METRIC_COUNT},
		{"profd_symbolizer_loads_total", "counter",
		 "ELF objects opened and loaded by the symbol cache (rising with every build: "
		 "the cache is smaller than what a profile needs)",
		 symbolizer__loads(src->sym), METRIC_COUNT},
		{"profd_unwind_loads_total", "counter",
		 "ELF objects opened and loaded by the unwinder's cache",
		 symbolizer__loads(src->unwind_sym), METRIC_COUNT},
		{"profd_builds_total", "counter",
		 "Profiles built and encoded by the builder thread", bs.jobs_done, METRIC_COUNT},
		{"profd_profiles_coarsened_total", "counter",
		 "Profiles made to fit max_profile_samples/max_profile_bytes (Pyroscope's limits): "
		 "labels beyond the defaults merged, rare stacks folded into their callers",
		 src->profiles_coarsened, METRIC_COUNT},
		{"profd_profile_samples_merged_total", "counter",
		 "Samples those profiles lost by merging into others (their values are kept)",
		 src->samples_coarsened, METRIC_COUNT},
		{"profd_builds_queued", "gauge",
		 "Profiles waiting for the builder thread, the one it is building included",
		 (uint64_t)bs.queued, METRIC_COUNT},
		{"profd_build_seconds_total", "counter",
		 "Wall-clock seconds the builder thread spent building (milliseconds / 1000, "
		 "rounded down)", bs.busy_ns / 1000000000ull, METRIC_COUNT},
		{"profd_memory_limit_bytes", "gauge",
		 "The daemon's memory limit (max_memory_mb; 0: none)", ms.limit_bytes, METRIC_COUNT},
		{"profd_memory_used_bytes", "gauge",
		 "Anonymous and shared-memory resident bytes, what max_memory_mb limits",
		 ms.used_bytes, METRIC_COUNT},
		{"profd_memory_pressure_total", "counter",
		 "Checks that found the daemon over max_memory_mb (each evicts from the symbol "
		 "caches)", ms.pressure, METRIC_COUNT},
		{"profd_memory_freed_bytes_total", "counter",
		 "Resident bytes those evictions gave back, as measured", ms.freed_bytes, METRIC_COUNT},
		{"profd_memory_coarse", "gauge",
		 "1 while memory pressure has profiles symbolized without DWARF (no lines, no "
		 "inlined frames)", (uint64_t)ms.coarse, METRIC_COUNT},
	};

	for (size_t i = 0; !err && i < sizeof(metrics) / sizeof(metrics[0]); i++)
		err = metric_print(buf, &metrics[i], i ? &metrics[i - 1] : NULL);
	if (!err)
		err = event_metrics(buf, &es);
	return err;
}
