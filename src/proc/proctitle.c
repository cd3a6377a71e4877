// SPDX-License-Identifier: BSD-2-Clause
/*
 * proctitle: labels from process titles (postgres backend types, #13): pure parser (the
 * contract: proctitle.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "lib/utf8dec.h"
#include "proc/proctitle.h"

#define CLUSTER_TRIES 8		/* ": " positions tried as the end of a cluster name */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* p[0..n) contains s (short): memmem without needing _GNU_SOURCE. */
static bool contains(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s), i;

	for (i = 0; i + k <= n; i++)
		if (!memcmp(p + i, s, k))
			return true;
	return false;
}

/*
 * Append src[0..n) to the label dst as printable UTF-8: C0 and C1 controls,
 * DEL and bytes that are not UTF-8 become '?'.  With fold_digits each run
 * of ASCII digits becomes "N".  Stops rather than split a character when
 * the label is full.  Every label must be written through here.
 */
static void label_put(char *dst, const char *src, size_t n, bool fold_digits)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t used = strnlen(dst, PROCTITLE_LABEL_MAX - 1);
	size_t i = 0;

	while (i < n) {
		size_t k = utf8dec__len(s + i, n - i);
		const char *emit = src + i;
		size_t m = k;

		if (fold_digits && is_digit(src[i])) {
			emit = "N";
			m = 1;
			while (i < n && is_digit(src[i]))
				i++;
		} else if (!k || s[i] < 0x20 || s[i] == 0x7f || (s[i] == 0xc2 && s[i + 1] < 0xa0)) {
			emit = "?";
			m = 1;
			i += k ? k : 1;
		} else {
			i += k;
		}
		if (used + m > PROCTITLE_LABEL_MAX - 1)
			break;
		memcpy(dst + used, emit, m);
		used += m;
	}
	dst[used] = '\0';
}

void proctitle__sanitize(char dst[PROCTITLE_LABEL_MAX], const char *src, size_t n)
{
	dst[0] = '\0';
	if (src)
		label_put(dst, src, strnlen(src, n), false);
}

static void label_puts(char *dst, const char *s)
{
	label_put(dst, s, strlen(s), false);
}

/* p[0..n) starts with the word w: followed by a space or the end. */
static bool starts_word(const char *p, size_t n, const char *w)
{
	size_t k = strlen(w);

	return n >= k && !memcmp(p, w, k) && (n == k || p[k] == ' ');
}

/* A client's address as BackendInitialize prints it: "[local]" or "ADDR(PORT)". */
static bool is_host(const char *t, size_t n)
{
	size_t i;

	if (n == 7 && !memcmp(t, "[local]", 7))
		return true;
	if (n < 4 || t[n - 1] != ')')
		return false;
	for (i = n - 1; i > 0 && is_digit(t[i - 1]); i--)
		;
	return i < n - 1 && n - 1 - i <= 5 && i >= 2 && t[i - 1] == '(';
}

/*
 * Find HOST in "USER DB HOST ACTIVITY" (min_words 2) or "USER [DB] HOST
 * ACTIVITY" (min_words 1): the first word from min_words on that looks
 * like one.  No ": " may come before it, or the text still holds the
 * cluster name.  *host is HOST's offset.
 */
static bool find_host(const char *p, size_t n, size_t min_words, size_t *host)
{
	size_t i = 0, words = 0;

	while (i < n) {
		size_t e = i;

		while (e < n && p[e] != ' ')
			e++;
		if (words++ >= min_words && is_host(p + i, e - i)) {
			*host = i;
			return !contains(p, i, ": ");
		}
		i = e + 1;
	}
	return false;
}

/* Roles whose part starts with a fixed word (GetBackendTypeDesc, bgw_name). */
static const struct {
	const char *name;
	bool rest_is_db;	/* "autovacuum worker DB", once it has picked a database */
} pg_roles[] = {
	{"checkpointer", false},
	{"background writer", false},
	{"walwriter", false},
	{"autovacuum launcher", false},
	{"autovacuum worker", true},
	{"walsender", false},
	{"walreceiver", false},
	{"startup", false},
	{"archiver", false},
	{"logger", false},
	{"logical replication launcher", false},
	{"parallel worker", false},
};

/* Label a recognised process part p[0..n) (trailing spaces trimmed); out untouched if not. */
static bool pg_known(const char *p, size_t n, struct proctitle *out)
{
	const size_t wk = strlen("walsender ");
	bool wal = starts_word(p, n, "walsender") && n > wk;
	const char *u = wal ? p + wk : p;
	size_t un = wal ? n - wk : n, host, sp, i;

	if (un && u[0] != ' ' && find_host(u, un, wal ? 1 : 2, &host)) {
		sp = (const char *)memchr(u, ' ', host) - u;
		label_puts(out->backend_type, wal ? "walsender" : "client backend");
		label_put(out->user, u, sp, false);
		if (host > sp + 1)
			label_put(out->database, u + sp + 1, host - sp - 2, false);
		return true;
	}
	/* PG15 "logical replication worker for subscription N[ sync M]"; PG16 adds "apply",
	 * "tablesync" and "parallel apply" before "worker". */
	if (starts_word(p, n, "logical replication") &&
	    contains(p, n, "worker for subscription")) {
		label_puts(out->backend_type, "logical replication worker");
		return true;
	}
	for (i = 0; i < sizeof(pg_roles) / sizeof(pg_roles[0]); i++) {
		size_t k = strlen(pg_roles[i].name);

		if (!starts_word(p, n, pg_roles[i].name))
			continue;
		label_puts(out->backend_type, pg_roles[i].name);
		if (pg_roles[i].rest_is_db && n > k + 1)
			label_put(out->database, p + k + 1, n - k - 1, false);
		return true;
	}
	return false;
}

/* Reached by comm ("postgres", "postmaster") or by the "postgres: " prefix. */
static int pg_parse(const char *title, size_t len, struct proctitle *out)
{
	static const char pfx[] = "postgres: ";
	size_t n = strnlen(title, len), i, tries = 0, first = 0, name;
	const char *p = title + sizeof(pfx) - 1;

	/* ps_status writes a C string; what follows the NUL is padding. */
	if (n < sizeof(pfx) - 1 || memcmp(title, pfx, sizeof(pfx) - 1)) {
		/* Only the postmaster keeps its argv (matched by comm: the title is not ours). */
		if (!n)
			return 0;
		label_puts(out->backend_type, "postmaster");
		return 1;
	}
	n -= sizeof(pfx) - 1;
	while (n && p[n - 1] == ' ')
		n--;

	for (i = 0; i + 1 < n && tries < CLUSTER_TRIES; i++) {
		if (p[i] != ':' || p[i + 1] != ' ')
			continue;
		if (!tries++)
			first = i + 2;
		if (pg_known(p + i + 2, n - i - 2, out))
			return 1;
	}
	if (pg_known(p, n, out))
		return 1;

	/* Some other background worker: its title is its bgw_name. */
	label_puts(out->backend_type, "background worker");
	name = first;
	if (name < n) {
		label_puts(out->backend_type, " ");
		label_put(out->backend_type, p + name, n - name, true);
	}
	return 1;
}

/*
 * A program is recognised by its comm or by how its title starts; parse
 * then labels it, returning 1, or 0 to let later rules try.  It sees at
 * most PROCTITLE_SCAN_MAX bytes, which may hold NULs and need not end in one.
 */
struct proctitle_rule {
	const char *comm[3];	/* NULL-terminated */
	const char *prefix;	/* or NULL */
	int (*parse)(const char *title, size_t len, struct proctitle *out);
};

static const struct proctitle_rule rules[] = {
	{{"postgres", "postmaster", NULL}, "postgres: ", pg_parse},
};

static bool rule_matches(const struct proctitle_rule *r, const char *comm, const char *title,
			 size_t len)
{
	size_t cn, i;

	if (r->prefix && len >= strlen(r->prefix) && !memcmp(title, r->prefix, strlen(r->prefix)))
		return true;
	if (!comm)
		return false;
	cn = strnlen(comm, 16);
	if (cn && comm[cn - 1] == '\n')
		cn--;
	for (i = 0; r->comm[i]; i++)
		if (strlen(r->comm[i]) == cn && !memcmp(comm, r->comm[i], cn))
			return true;
	return false;
}

int proctitle__parse(const char *comm, const char *title, size_t len, struct proctitle *out)
{
	size_t i;

	if (!out || (!title && len))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!title)
		title = "";
	if (len > PROCTITLE_SCAN_MAX)
		len = PROCTITLE_SCAN_MAX;
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (!rule_matches(&rules[i], comm, title, len))
			continue;
		if (rules[i].parse(title, len, out) > 0)
			return 1;
		memset(out, 0, sizeof(*out));
	}
	return 0;
}
