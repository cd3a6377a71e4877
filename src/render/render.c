// SPDX-License-Identifier: BSD-2-Clause
/* render: pprof / folded / SVG, and which sample type they show (the contract: render.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pprof/pprof.h"
#include "render/flamegraph.h"
#include "render/render.h"

int render__parse_format(const char *name, enum render_format *out)
{
	static const struct {
		const char *name;
		enum render_format f;
	} formats[] = {
		{"pprof", RENDER_PPROF},
		{"folded", RENDER_FOLDED},
		{"svg", RENDER_SVG},
	};

	if (!name) {
		*out = RENDER_PPROF;
		return 0;
	}
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (!strcmp(name, formats[i].name)) {
			*out = formats[i].f;
			return 0;
		}
	}
	return -EINVAL;
}

const char *render__content_type(enum render_format f)
{
	switch (f) {
	case RENDER_FOLDED:
	case RENDER_GO_HEAP_TEXT:
		return "text/plain; charset=utf-8";
	case RENDER_SVG:
		return "image/svg+xml; charset=utf-8";
	default:
		return "application/octet-stream";
	}
}

/* The index of sample type name, or of the default type, or 0. */
static size_t value_index(const struct pprof *p, const char *name)
{
	struct pprof_value_type vt;

	if (!name)
		name = pprof__default_sample_type(p);
	for (size_t i = 0; name && pprof__sample_type(p, i, &vt) == 0; i++)
		if (!strcmp(vt.type, name))
			return i;
	return 0;
}

/* The root level: the split label, or the process name for samples without it. */
static const char *root_label(const struct render_opts *opts, char *buf, size_t len)
{
	if (!opts->split || !strcmp(opts->split, "process_name"))
		return "process_name";
	if (!*opts->split)
		return NULL;
	snprintf(buf, len, "%s|process_name", opts->split);
	return buf;
}

int render__profile(struct pprof *p, const struct render_opts *opts, uint8_t **out, size_t *len)
{
	char buf[80];
	char *text = NULL;
	int err;

	switch (opts->format) {
	case RENDER_FOLDED:
		err = pprof__folded(p, value_index(p, opts->value),
				    root_label(opts, buf, sizeof(buf)), &text, len);
		break;
	case RENDER_SVG:
		err = flamegraph__svg(p, value_index(p, opts->value),
				      &(struct flamegraph_opts){
					      .title = opts->title,
					      /* "": no root level */
					      .root_label = root_label(opts, buf, sizeof(buf)) ?: "",
				      },
				      &text, len);
		break;
	case RENDER_GO_HEAP_TEXT:
		err = pprof__heap_text(p, &text, len);
		break;
	default:
		return pprof__encode(p, opts->gzip, out, len);
	}
	if (!err)
		*out = (uint8_t *)text;
	return err;
}
