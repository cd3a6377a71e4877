// SPDX-License-Identifier: BSD-2-Clause
#include <stdio.h>

#include "commands.h"
#include "log.h"

int serve__main(int argc, char **argv)
{
	log__error("serve is not built yet");
	return 1;
}
