/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * source: the seam between where a profile comes from (cpu/'s sessions,
 * heap/'s maps, the next kind of profile) and what takes profiles
 * (server/api.c's jobs, cmd/record.c).  Every profile is made the same way:
 *
 *   snapshot   on the loop's thread: what the build needs of state the loop
 *              owns (the process table, the BPF maps), taken now, quickly;
 *   build      on the builder thread (or, in profd record, the loop's):
 *              symbolize and build the pprof, with a symbolizer nobody else
 *              uses meanwhile; the source is left alone until it returns;
 *   free       on the loop's thread, once the profile is rendered.
 *
 * A source embeds struct profile_source as its first member and points it
 * at its ops; the taker knows nothing else of it.  Rendering (render/) and
 * answering are the taker's.  docs/architecture.md ("Adding a profile
 * source") shows how a new kind of profile plugs in.
 */
#ifndef PROFD_PROFILE_SOURCE_H
#define PROFD_PROFILE_SOURCE_H

struct pprof;
struct profile_source;
struct symbolizer;

struct profile_source_ops {
	/* What a failed build says: "building the profile", ... */
	const char *building;
	/* 0 or negative errno. */
	int (*snapshot)(struct profile_source *src);
	int (*build)(struct profile_source *src, struct symbolizer *sym, struct pprof **out);
	void (*free)(struct profile_source *src);
};

struct profile_source {
	const struct profile_source_ops *ops;
};

int profile_source__snapshot(struct profile_source *src);
int profile_source__build(struct profile_source *src, struct symbolizer *sym, struct pprof **out);
/* NULL is fine. */
void profile_source__free(struct profile_source *src);
/* Both halves at once, on the calling thread (profd record). */
int profile_source__pprof(struct profile_source *src, struct symbolizer *sym, struct pprof **out);

#endif
