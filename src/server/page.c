// SPDX-License-Identifier: BSD-2-Clause
#include "server/page.h"

/* server/page.html, made a C string by the Makefile. */
static const char page_html[] =
#include "assets/server/page.html.h"
	;

const char *page__index(size_t *len)
{
	if (len)
		*len = sizeof(page_html) - 1;
	return page_html;
}
