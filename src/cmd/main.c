// SPDX-License-Identifier: BSD-2-Clause
/* main: dispatch to the subcommands. */
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"
#include "lib/buildinfo.h"

struct cmd {
	const char *name;
	int (*func)(int argc, char **argv);
	const char *help;
};

/* profd version, profd --version: what this binary is, one fact a line. */
static int version__main(int argc, char **argv)
{
	const struct buildinfo *bi = buildinfo__get();

	if (argc > 1) {
		fprintf(stderr, "profd: version takes no arguments\n");
		return 2;
	}
	printf("profd %s\n"
	       "commit: %s\n"
	       "build: %s, sanitizer %s, %s\n"
	       "flags: %s\n"
	       "libbpf: %s\n"
	       "elfutils: %s\n",
	       bi->version, bi->commit, bi->link, bi->sanitizer, bi->compiler, bi->flags,
	       bi->libbpf, bi->elfutils);
	return 0;
}

static const struct cmd cmds[] = {
	{"serve", serve__main, "run the daemon: REST API and pprof endpoints"},
	{"record", record__main, "take one CPU profile and write it to a file"},
	{"version", version__main, "print the version, commit, build and libraries (also --version)"},
	{NULL, NULL, NULL},
};

static int usage(FILE *f)
{
	fprintf(f, "usage: profd COMMAND [OPTIONS]\n\ncommands:\n");
	for (const struct cmd *c = cmds; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->help);
	fprintf(f, "\n'profd COMMAND --help' describes a command's options.\n");
	return f == stderr ? 2 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return version__main(argc - 1, argv + 1);
	for (const struct cmd *c = cmds; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->func(argc - 1, argv + 1);
	fprintf(stderr, "profd: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
