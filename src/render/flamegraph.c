// SPDX-License-Identifier: BSD-2-Clause
/*
 * flamegraph: pprof → interactive SVG.
 *
 * Stacks are merged into a tree (node = a frame name and kind under a
 * parent), laid out with siblings in name order as flamegraph.pl does, and
 * written as one <g> per frame: <title>, <rect>, and a <text> label when
 * one fits.  The script (flamegraph.js, compiled in) does hover, zoom and
 * search on the DOM, reading names back from the <title>s.
 */
#define _GNU_SOURCE	/* qsort_r */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/htab.h"
#include "lib/strbuf.h"
#include "pprof/pprof.h"
#include "render/flamegraph.h"

static const char flamegraph_js[] =
#include "assets/render/flamegraph.js.h"
	;

#define FG_DEFAULT_WIDTH 1200
#define FG_MIN_WIDTH 100
#define FG_MAX_WIDTH 20000
#define FG_DEFAULT_MIN_PX 1.0
/* Layout, in px; flamegraph.js knows FG_PAD, FG_CHAR_W and the label offsets too. */
#define FG_PAD 10
#define FG_FRAME_H 16
#define FG_TOP 70		/* title, subtitle, legend */
#define FG_BOTTOM 30		/* details line */
#define FG_FONT 12
#define FG_CHAR_W (FG_FONT * 0.59)	/* flamegraph.pl's estimate of Verdana */
#define FG_LABEL_MIN_CHARS 3

/* Frame kinds beyond pprof's: the "all" root, merged narrow frames, and
 * the deeper frames of stacks past the node budget. */
enum fg_kind {
	FG_ALL = 16,
	FG_MERGED,
	FG_CUT,
};

/*
 * Nodes (distinct call paths) a flamegraph holds at most.  Every frame of
 * every distinct path is a node until the layout merges the narrow ones,
 * so deep, varied stacks (recursion 110-126 deep through inlined chains)
 * took 0.9-1.5 GB for a 30 s, 1000 Hz profile.  Past the budget, a stack
 * that would add a node ends in one "[deeper frames]" node of the last
 * frame it shares (at most one per node, so at most twice the budget):
 * ~100 bytes a node, ~20 MB at most.  Such frames are a few pixels wide
 * long before the budget runs out; the subtitle says how many samples it
 * cut.
 */
#define FG_MAX_NODES 100000

struct fg_node {
	uint32_t first_child;	/* 0: none (node 0, "all", is nobody's child) */
	uint32_t next_sibling;
	uint32_t parent;
	uint32_t name_off;	/* into fg.names */
	uint32_t name_len;
	uint32_t kind;		/* enum pprof_frame_kind or enum fg_kind */
	int64_t value;
};

/* A frame to draw: a node, or a run of narrow siblings merged into one. */
struct fg_box {
	uint32_t node;		/* for a merged run: the first node of the run */
	uint32_t merged;	/* nodes merged; 0 for a plain frame */
	uint32_t depth;
	int64_t offset;		/* in value units from the left edge */
	int64_t value;
};

struct fg {
	struct fg_node *nodes;
	size_t n, cap;
	struct htab children;	/* nodes by (parent, kind, name) */
	struct strbuf names;
	struct fg_box *boxes;
	size_t nboxes, boxes_cap;
	uint32_t *scratch;	/* children being sorted, a stack of runs */
	size_t scratch_len, scratch_cap;
	uint32_t max_depth;
	double scale;		/* px per value unit */
	double min_px;
	int64_t cut;		/* value of the stacks cut at the node budget */
};

/* ---- XML text ---------------------------------------------------------- */

/*
 * Length of the UTF-8 sequence at s that XML 1.0 accepts as one character,
 * or 0: a stray or overlong byte, a surrogate, U+FFFE/U+FFFF, or a control
 * character other than what XML allows (names have none of those anyway).
 */
static size_t xml_char_len(const unsigned char *s, size_t len)
{
	size_t n, i;

	if (s[0] < 0x80)
		return s[0] >= 0x20 ? 1 : 0;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (len < n)
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	if (s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
		return 0;
	return n;
}

/* Characters in s, counting each byte XML refuses as one (it becomes U+FFFD). */
static size_t xml_char_count(const char *s, size_t len)
{
	size_t i = 0, n = 0, c;

	while (i < len) {
		c = xml_char_len((const unsigned char *)s + i, len - i);
		i += c ? c : 1;
		n++;
	}
	return n;
}

/*
 * Writes at most max_chars characters of s, escaped for both XML text and
 * attribute values.  Anything XML can't hold becomes U+FFFD, so a name
 * can't make the document malformed whatever bytes it has.
 */
static int sb_put_xml(struct strbuf *sb, const char *s, size_t len, size_t max_chars)
{
	size_t i = 0, c, n = 0;
	const char *esc;
	int err = 0;

	while (!err && i < len && n++ < max_chars) {
		c = xml_char_len((const unsigned char *)s + i, len - i);
		switch (c ? s[i] : 0) {
		case '<': esc = "&lt;"; break;
		case '>': esc = "&gt;"; break;
		case '&': esc = "&amp;"; break;
		case '"': esc = "&quot;"; break;
		case '\'': esc = "&#39;"; break;
		default: esc = NULL;
		}
		if (esc)
			err = strbuf__adds(sb, esc);
		else if (c)
			err = strbuf__add(sb, s + i, c);
		else
			err = strbuf__adds(sb, "\xef\xbf\xbd");
		i += c ? c : 1;
	}
	return err;
}

static int sb_put_xml_all(struct strbuf *sb, const char *s)
{
	return sb_put_xml(sb, s, strlen(s), SIZE_MAX);
}

/* 1234567 → "1,234,567", as flamegraph.pl writes counts. */
static const char *fmt_count(int64_t v, char buf[32])
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%" PRId64, v < 0 ? -v : v);
	int i, j = 0;

	if (v < 0)
		buf[j++] = '-';
	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = digits[i];
	}
	buf[j] = '\0';
	return buf;
}

/* Nanoseconds as a person reads time: "1.23 s", "45.6 ms", "789 us", "12 ns". */
static const char *fmt_time(int64_t ns, char buf[32])
{
	static const struct {
		int64_t per;
		const char *unit;
	} scales[] = {
		{1000000000, "s"},
		{1000000, "ms"},
		{1000, "\xc2\xb5s"},
	};
	int64_t a = ns < 0 ? -ns : ns;

	for (size_t i = 0; i < sizeof(scales) / sizeof(scales[0]); i++)
		if (a >= scales[i].per) {
			double v = (double)ns / (double)scales[i].per;

			snprintf(buf, 32, a >= 100 * scales[i].per ? "%.0f %s" : a >= 10 * scales[i].per ?
				 "%.1f %s" : "%.2f %s", v, scales[i].unit);
			return buf;
		}
	snprintf(buf, 32, "%" PRId64 " ns", ns);
	return buf;
}

/* ---- the tree ---------------------------------------------------------- */

static uint32_t fg_hash(uint32_t parent, uint32_t kind, const char *name, size_t len)
{
	uint64_t h = hash__u64(hash__u64(HASH_SEED, parent), kind);

	return hash__final(hash__bytes(h, name, len));
}

static const char *fg_name(const struct fg *fg, const struct fg_node *nd)
{
	return fg->names.buf + nd->name_off;
}

static int fg_add_node(struct fg *fg, uint32_t parent, uint32_t kind, const char *name,
		       size_t len)
{
	struct fg_node *nd;
	int err;

	if (fg->n >= UINT32_MAX || fg->names.len + len + 1 > UINT32_MAX)
		return -E2BIG;
	err = array__grow(&fg->nodes, &fg->cap, fg->n + 1, sizeof(*fg->nodes));
	if (!err)
		err = strbuf__add(&fg->names, name, len);
	if (!err)
		err = strbuf__add(&fg->names, "", 1);
	if (err)
		return err;
	nd = &fg->nodes[fg->n];
	*nd = (struct fg_node){
		.parent = parent,
		.name_off = (uint32_t)(fg->names.len - len - 1),
		.name_len = (uint32_t)len,
		.kind = kind,
	};
	if (fg->n) {
		nd->next_sibling = fg->nodes[parent].first_child;
		fg->nodes[parent].first_child = (uint32_t)fg->n;
	}
	fg->n++;
	return 0;
}

struct fg_key {
	uint32_t parent, kind;
	const char *name;
	size_t len;
};

static bool fg_eq(const void *ctx, size_t pos, const void *key)
{
	const struct fg *fg = ctx;
	const struct fg_node *nd = &fg->nodes[pos];
	const struct fg_key *k = key;

	return nd->parent == k->parent && nd->kind == k->kind && nd->name_len == k->len &&
	       !memcmp(fg_name(fg, nd), k->name, k->len);
}

/* The child of parent called name of this kind, added if new (and add);
 * 0 on error, or when it is new and !add (*err 0). */
static uint32_t fg_child(struct fg *fg, uint32_t parent, uint32_t kind, const char *name, bool add,
			 int *err)
{
	struct fg_key k = {parent, kind, name, strlen(name)};
	uint32_t h = fg_hash(parent, kind, name, k.len);
	struct htab_slot *slot;
	long pos;

	*err = htab__reserve(&fg->children);
	if (*err)
		return 0;
	pos = htab__find(&fg->children, h, fg_eq, fg, &k, &slot);
	if (pos >= 0)
		return (uint32_t)pos;
	if (!add)
		return 0;
	*err = fg_add_node(fg, parent, kind, name, k.len);
	if (*err)
		return 0;
	htab__set(&fg->children, slot, h, fg->n - 1);
	return (uint32_t)(fg->n - 1);
}

static int fg_add_stack(const struct pprof_frame *frames, size_t n, int64_t value, void *ctx)
{
	struct fg *fg = ctx;
	uint32_t cur = 0;
	size_t i;
	int err = 0;

	if (value <= 0)
		return 0;
	if (fg->nodes[0].value > INT64_MAX - value)
		return -EOVERFLOW;
	fg->nodes[0].value += value;
	for (i = 0; i < n; i++) {
		uint32_t next = fg_child(fg, cur, frames[i].kind, frames[i].name,
					 fg->n < FG_MAX_NODES, &err);

		if (!next && err)
			return err;
		if (!next) {
			/* Past the budget: the rest of this stack is one node. */
			next = fg_child(fg, cur, FG_CUT, "[deeper frames]", true, &err);
			if (!next)
				return err;
			fg->nodes[next].value += value;
			fg->cut += value;
			return 0;
		}
		cur = next;
		fg->nodes[cur].value += value;
	}
	return 0;
}

/* ---- layout ------------------------------------------------------------ */

/* Siblings in name order, as flamegraph.pl draws them; then by kind. */
static int child_cmp(const void *a, const void *b, void *ctx)
{
	const struct fg *fg = ctx;
	const struct fg_node *x = &fg->nodes[*(const uint32_t *)a];
	const struct fg_node *y = &fg->nodes[*(const uint32_t *)b];
	int c = strcmp(fg_name(fg, x), fg_name(fg, y));

	return c ? c : (x->kind > y->kind) - (x->kind < y->kind);
}

static int fg_box(struct fg *fg, uint32_t node, uint32_t merged, uint32_t depth, int64_t offset,
		  int64_t value)
{
	int err = array__grow(&fg->boxes, &fg->boxes_cap, fg->nboxes + 1, sizeof(*fg->boxes));

	if (err)
		return err;
	fg->boxes[fg->nboxes++] = (struct fg_box){node, merged, depth, offset, value};
	if (depth > fg->max_depth)
		fg->max_depth = depth;
	return 0;
}

/* A run of narrow siblings: one merged frame if the run is wide enough. */
static int fg_flush_run(struct fg *fg, uint32_t first, uint32_t n, uint32_t depth,
			int64_t offset, int64_t value)
{
	if (!n || value * fg->scale < fg->min_px)
		return 0;
	return fg_box(fg, first, n, depth, offset, value);
}

/*
 * Lays out node at depth and offset, then its children.  Children are
 * sorted into fg->scratch above the caller's part, which nested calls leave
 * as they found it.
 */
static int fg_layout(struct fg *fg, uint32_t node, uint32_t depth, int64_t offset)
{
	size_t base = fg->scratch_len, n = 0, i;
	uint32_t c, run_first = 0, run_n = 0;
	int64_t run_off = 0, run_val = 0;
	int err;

	err = fg_box(fg, node, 0, depth, offset, fg->nodes[node].value);
	for (c = fg->nodes[node].first_child; !err && c; c = fg->nodes[c].next_sibling, n++) {
		err = array__grow(&fg->scratch, &fg->scratch_cap, base + n + 1, sizeof(*fg->scratch));
		if (!err)
			fg->scratch[base + n] = c;
	}
	if (err)
		return err;
	fg->scratch_len = base + n;
	if (n)	/* a leaf of an empty profile: fg->scratch may still be NULL */
		qsort_r(fg->scratch + base, n, sizeof(*fg->scratch), child_cmp, fg);
	for (i = 0; !err && i < n; i++) {
		c = fg->scratch[base + i];
		if (fg->nodes[c].value * fg->scale >= fg->min_px) {
			err = fg_flush_run(fg, run_first, run_n, depth + 1, run_off, run_val);
			run_n = 0;
			run_val = 0;
			err = err ?: fg_layout(fg, c, depth + 1, offset);
		} else {
			if (!run_n++) {
				run_first = c;
				run_off = offset;
			}
			run_val += fg->nodes[c].value;
		}
		offset += fg->nodes[c].value;
	}
	err = err ?: fg_flush_run(fg, run_first, run_n, depth + 1, run_off, run_val);
	fg->scratch_len = base;
	return err;
}

/* ---- the SVG ----------------------------------------------------------- */

static const char *const kind_class[] = {
	[PPROF_FRAME_ROOT] = "r", [PPROF_FRAME_USER] = "u", [PPROF_FRAME_KERNEL] = "k",
	[PPROF_FRAME_INLINED] = "i", [FG_ALL] = "a", [FG_MERGED] = "m", [FG_CUT] = "m",
};

/*
 * Colours by kind, as flamegraph.pl's "java" palette tells code apart:
 * user code red, kernel orange, inlined aqua; the process (root) frames
 * blue.  The shade comes from a hash of the name, so a function keeps its
 * colour from one profile to the next.
 */
static void fg_colour(const char *name, uint32_t kind, int rgb[3])
{
	uint32_t h = fg_hash(0, 0, name, strlen(name));
	double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0;

	switch (kind) {
	case PPROF_FRAME_KERNEL:
		rgb[0] = 190 + (int)(65 * v2), rgb[1] = 90 + (int)(65 * v2), rgb[2] = 0;
		break;
	case PPROF_FRAME_INLINED:
		rgb[0] = 50 + (int)(60 * v1), rgb[1] = 165 + (int)(55 * v1);
		rgb[2] = 165 + (int)(55 * v1);
		break;
	case PPROF_FRAME_ROOT:
		rgb[0] = 120 + (int)(50 * v1), rgb[1] = 150 + (int)(40 * v1), rgb[2] = 225;
		break;
	case FG_ALL:
	case FG_MERGED:
	case FG_CUT:
		rgb[0] = rgb[1] = rgb[2] = 190 + (int)(20 * v1);
		break;
	default:
		rgb[0] = 200 + (int)(55 * v2), rgb[1] = rgb[2] = 50 + (int)(80 * v1);
	}
}

struct fg_svg {
	struct strbuf out;
	const char *unit;	/* NULL: the values are nanoseconds, shown as time */
	int64_t total;
	int64_t cut;		/* see struct fg */
	int width;
	int height;
};

/* "1,234 samples", "56 bytes", or for time "1.23 s". */
static const char *fmt_value(const struct fg_svg *svg, int64_t v, char buf[48])
{
	char n[32];

	if (!svg->unit)
		return fmt_time(v, buf);
	snprintf(buf, 48, "%s %s", fmt_count(v, n), svg->unit);
	return buf;
}

static int fg_write_box(struct fg *fg, struct fg_svg *svg, const struct fg_box *b)
{
	const struct fg_node *nd = &fg->nodes[b->node];
	uint32_t kind = b->merged ? FG_MERGED : nd->kind;
	double x = FG_PAD + b->offset * fg->scale, w = b->value * fg->scale;
	/* "all" is the whole, also when the profile is empty. */
	double pct = b->depth ? 100.0 * (double)b->value / (double)svg->total : 100.0;
	int y = svg->height - FG_BOTTOM - (int)(b->depth + 1) * FG_FRAME_H;
	char merged[48], value[48];
	const char *name = merged;
	size_t name_len, chars, fit;
	int rgb[3], err;

	if (b->merged)
		snprintf(merged, sizeof(merged), "[%" PRIu32 " small frames]", b->merged);
	else
		name = b->depth ? fg_name(fg, nd) : "all";
	name_len = strlen(name);
	fg_colour(name, kind, rgb);
	err = strbuf__addf(&svg->out, "<g class=\"%s\"><title>", kind_class[kind]);
	err = err ?: sb_put_xml(&svg->out, name, name_len, SIZE_MAX);
	err = err ?: strbuf__addf(&svg->out,
			       " (%s, %.2f%%)</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			       "height=\"%d\" fill=\"rgb(%d,%d,%d)\"/>",
			       fmt_value(svg, b->value, value), pct, x, y, b->depth ? w : svg->width - 2 * FG_PAD,
			       FG_FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
	/* A label when a few characters fit; flamegraph.js redoes it on zoom. */
	fit = w > 6 ? (size_t)((w - 6) / FG_CHAR_W) : 0;
	if (!err && fit >= FG_LABEL_MIN_CHARS) {
		chars = xml_char_count(name, name_len);
		err = strbuf__addf(&svg->out, "<text x=\"%.1f\" y=\"%d\">", x + 3, y + FG_FRAME_H - 4);
		err = err ?: sb_put_xml(&svg->out, name, name_len, chars <= fit ? fit : fit - 2);
		err = err ?: strbuf__adds(&svg->out, chars <= fit ? "</text>" : "..</text>");
	}
	return err ?: strbuf__adds(&svg->out, "</g>\n");
}

/* "cpu-clock at 99 Hz, targets: pid 1 · 10.0 s · 1,234 samples" */
static int fg_write_subtitle(struct fg_svg *svg, const struct pprof *p, const char *subtitle)
{
	const char *comment = pprof__comment(p, 0);
	int64_t dur = pprof__duration_nanos(p);
	const char *sep = "";
	char value[48];
	int err = 0;

	if (subtitle) {
		err = sb_put_xml_all(&svg->out, subtitle);
		sep = " \xc2\xb7 ";
	} else {
		if (comment && *comment) {
			if (!strncmp(comment, "profd: ", 7))
				comment += 7;
			err = sb_put_xml_all(&svg->out, comment);
			sep = " \xc2\xb7 ";
		}
		if (!err && dur > 0) {
			err = strbuf__addf(&svg->out, "%s%.1f s", sep, dur / 1e9);
			sep = " \xc2\xb7 ";
		}
	}
	err = err ?: strbuf__addf(&svg->out, "%stotal %s", sep, fmt_value(svg, svg->total, value));
	if (!err && svg->cut)
		err = strbuf__addf(&svg->out, " \xc2\xb7 %s end in [deeper frames] (over %d "
				   "distinct paths)", fmt_value(svg, svg->cut, value), FG_MAX_NODES);
	return err;
}

static int fg_write(struct fg *fg, struct fg_svg *svg, const struct pprof *p,
		    const struct flamegraph_opts *o)
{
	static const struct {
		uint32_t kind;
		const char *what;
	} legend[] = {
		{PPROF_FRAME_USER, "user"},
		{PPROF_FRAME_KERNEL, "kernel"},
		{PPROF_FRAME_INLINED, "inlined"},
		{PPROF_FRAME_ROOT, "process"},
		{FG_MERGED, "merged narrow frames"},
	};
	int w = svg->width, h = svg->height, rgb[3], err;
	size_t i;

	err = strbuf__addf(&svg->out,
			"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
			"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
			"xmlns=\"http://www.w3.org/2000/svg\" class=\"flamegraph\">\n"
			"<style>\n"
			"text{font-family:Verdana,'DejaVu Sans',sans-serif;font-size:%dpx;fill:#000}\n"
			".title{font-size:17px;text-anchor:middle}\n"
			".sub{text-anchor:middle;fill:#444}\n"
			".end{text-anchor:end}\n"
			".btn{cursor:pointer;fill:#06c}\n"
			".btn:hover{text-decoration:underline}\n"
			".frames g{cursor:pointer}\n"
			".frames text{pointer-events:none}\n"
			".frames g:hover rect{stroke:#000;stroke-width:.5}\n"
			".par rect{opacity:.55}\n"
			".hide{display:none}\n"
			"</style>\n"
			"<rect width=\"100%%\" height=\"100%%\" fill=\"#f6f6f0\"/>\n"
			"<text class=\"title\" x=\"%d\" y=\"24\">",
			w, h, w, h, FG_FONT, w / 2);
	err = err ?: sb_put_xml_all(&svg->out, o->title ? o->title : "Flame Graph");
	err = err ?: strbuf__addf(&svg->out, "</text>\n<text class=\"sub\" x=\"%d\" y=\"42\">", w / 2);
	err = err ?: fg_write_subtitle(svg, p, o->subtitle);
	err = err ?: strbuf__addf(&svg->out,
			       "</text>\n"
			       "<text class=\"btn unzoom hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n"
			       "<text class=\"btn search end\" x=\"%d\" y=\"24\">Search</text>\n"
			       "<text class=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
			       "<text class=\"matched end\" x=\"%d\" y=\"%d\"> </text>\n"
			       "<g class=\"legend\">",
			       FG_PAD, w - FG_PAD, FG_PAD, h - 10, w - FG_PAD, h - 10);
	for (i = 0; !err && i < sizeof(legend) / sizeof(legend[0]); i++) {
		fg_colour(legend[i].what, legend[i].kind, rgb);
		err = strbuf__addf(&svg->out,
				"<rect x=\"%d\" y=\"52\" width=\"10\" height=\"10\" "
				"fill=\"rgb(%d,%d,%d)\"/><text x=\"%d\" y=\"61\">%s</text>",
				FG_PAD + (int)i * 90, rgb[0], rgb[1], rgb[2], FG_PAD + (int)i * 90 + 14,
				legend[i].what);
	}
	err = err ?: strbuf__adds(&svg->out, "</g>\n<g class=\"frames\">\n");
	for (i = 0; !err && i < fg->nboxes; i++)
		err = fg_write_box(fg, svg, &fg->boxes[i]);
	/* Last, so the frames exist when it runs.  No name is ever in it. */
	err = err ?: strbuf__addf(&svg->out, "</g>\n<script><![CDATA[\n%s]]></script>\n</svg>\n",
			       flamegraph_js);
	return err;
}

static void fg_free(struct fg *fg)
{
	free(fg->nodes);
	htab__free(&fg->children);
	strbuf__free(&fg->names);
	free(fg->boxes);
	free(fg->scratch);
}

int flamegraph__svg(struct pprof *p, size_t value_index, const struct flamegraph_opts *opts,
		    char **out, size_t *len)
{
	struct flamegraph_opts o = opts ? *opts : (struct flamegraph_opts){0};
	struct fg_svg svg = {0};
	struct pprof_value_type vt;
	struct fg fg = {0};
	int err;

	if (!p || !out || !len)
		return -EINVAL;
	err = pprof__sample_type(p, value_index, &vt);
	if (err)
		return err;
	svg.width = o.width ? o.width : FG_DEFAULT_WIDTH;
	if (svg.width < FG_MIN_WIDTH || svg.width > FG_MAX_WIDTH || o.min_width < 0)
		return -EINVAL;
	fg.min_px = o.min_width > 0 ? o.min_width : FG_DEFAULT_MIN_PX;
	/* Off-CPU and wall profiles' times (and a CPU profile's cpu type)
	 * read as time, not as a count of "samples". */
	svg.unit = o.unit ? o.unit
		   : !strcmp(vt.unit, "bytes")	     ? "bytes"
		   : !strcmp(vt.unit, "nanoseconds") ? NULL
						     : "samples";
	err = fg_add_node(&fg, 0, FG_ALL, "all", 3);
	err = err ?: pprof__for_each_stack(p, value_index,
					   o.root_label ? (*o.root_label ? o.root_label : NULL)
							: "process_name",
					   fg_add_stack, &fg);
	if (err)
		goto cleanup;
	svg.total = fg.nodes[0].value;
	svg.cut = fg.cut;
	fg.scale = svg.total ? (double)(svg.width - 2 * FG_PAD) / (double)svg.total : 0;
	err = fg_layout(&fg, 0, 0, 0);
	if (err)
		goto cleanup;
	svg.height = FG_TOP + (int)(fg.max_depth + 1) * FG_FRAME_H + FG_BOTTOM;
	err = fg_write(&fg, &svg, p, &o);
	if (err)
		goto cleanup;
	*out = strbuf__detach(&svg.out, len);
	err = *out ? 0 : -ENOMEM;
cleanup:
	strbuf__free(&svg.out);
	fg_free(&fg);
	return err;
}
