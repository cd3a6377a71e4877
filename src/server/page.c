// SPDX-License-Identifier: BSD-2-Clause
#include "daemon/page.h"

/* daemon/page.html, made a C string by the Makefile. */
static const char page_html[] =
#include "assets/daemon/page.html.h"
	;

const char *page__index(size_t *len)
{
	if (len)
		*len = sizeof(page_html) - 1;
	return page_html;
}
