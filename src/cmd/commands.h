/* SPDX-License-Identifier: BSD-2-Clause */
/* The profd subcommands; main() dispatches to these from one table. */
#ifndef PROFD_COMMANDS_H
#define PROFD_COMMANDS_H

int record__main(int argc, char **argv);
int serve__main(int argc, char **argv);

#endif
