// SPDX-License-Identifier: BSD-2-Clause
/*
 * POST /profile/cpu's body as the daemon reads it: strict JSON
 * (reqparse__json), then the compute API's fields (reqparse__post_args).
 * http__body hands the parser a NUL-terminated copy, and so does this.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/reqparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct post_args a = {.frequency = 99, .seconds = 5};
	struct json_object *root;
	char errbuf[256];
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	root = reqparse__json(text, size, errbuf, sizeof(errbuf));
	if (root) {
		reqparse__post_args(root, 60, &a, errbuf, sizeof(errbuf));
		targets__free(&a.targets);
		json_object_put(root);
	}
	free(text);
	return 0;
}
