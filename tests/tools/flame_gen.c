// SPDX-License-Identifier: BSD-2-Clause
/*
 * flame_gen OUT.svg: writes the flamegraph of a small profile whose
 * function names try to break out of the SVG (markup, quotes, CDATA ends,
 * script tags, event handlers), and prints those names, one a line, for
 * t_flame_page.sh to check in a browser that they come back as text and
 * that nothing they hold runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof/pprof.h"
#include "render/flamegraph.h"

static const char *const hostile[] = {
	"a<b&c\"d'e>",
	"</script><script>window.pwned='script'</script>",
	"]]></script><script>window.pwned='cdata'</script><script><![CDATA[",
	"<img src=x onerror=\"window.pwned='img'\">",
	"\" onmouseover=\"window.pwned='attr'\" x=\"",
	"std::vector<std::pair<std::string const, std::unique_ptr<Foo<int>>>>::emplace_back<>()",
};

int main(int argc, char **argv)
{
	static const struct pprof_value_type types[] = {{"samples", "count"}};
	const struct pprof_label label = {"process_name", "<evil & co>", 0, NULL};
	struct pprof *p = pprof__new(types, 1, types[0], 1);
	struct pprof_line ln;
	uint64_t locs[2];
	char *svg = NULL;
	size_t len, i;
	FILE *f;
	int err = p ? 0 : -ENOMEM;

	if (argc != 2) {
		fprintf(stderr, "usage: flame_gen OUT.svg\n");
		return 2;
	}
	ln = (struct pprof_line){pprof__function(p, "main", NULL, NULL, 0), 1};
	locs[1] = pprof__location(p, 0, 0, &ln, 1);
	for (i = 0; !err && i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		int64_t v = (int64_t)(10 * (i + 1));

		ln = (struct pprof_line){pprof__function(p, hostile[i], NULL, NULL, 0), 1};
		locs[0] = pprof__location(p, 0, 0, &ln, 1);
		err = pprof__add_sample(p, locs, 2, &v, &label, 1);
		printf("%s\n", hostile[i]);
	}
	err = err ?: flamegraph__svg(p, 0, &(struct flamegraph_opts){.title = hostile[1]}, &svg,
				     &len);
	f = err ? NULL : fopen(argv[1], "w");
	if (!err && (!f || fwrite(svg, 1, len, f) != len || fclose(f)))
		err = -errno;
	if (err)
		fprintf(stderr, "flame_gen: %s\n", strerror(-err));
	free(svg);
	pprof__free(p);
	return err ? 1 : 0;
}
