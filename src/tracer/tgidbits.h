/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tgidbits: the daemon's side of the kernel side's tgid_bits array
 * (bpf/targets.bpf.h): a bit per process and map saying the process may
 * have an entry there, so that the programs look an entry up only where it
 * may be.  Whoever adds an entry to pid_targets or proc_copy sets the bit
 * first.  The array is mapped into the daemon and written with atomic
 * operations, as the programs write it: 64 processes share a word.
 */
#ifndef PROFD_TGIDBITS_H
#define PROFD_TGIDBITS_H

#include <linux/types.h>
#include <stdint.h>

#include "bpf/abi/targets.h"

struct tgidbits;

/* Map map_fd, the array of PROFD_TGID_NR * words words.  NULL if it cannot
 * be mapped (logged): then the kernel side must not rely on it. */
struct tgidbits *tgidbits__map(int map_fd, uint32_t words);
void tgidbits__free(struct tgidbits *tb);

/* pid may have an entry in kind's map.  tb NULL, or a pid past the array:
 * nothing (the kernel side looks those up). */
void tgidbits__set(struct tgidbits *tb, enum profd_tgid_bit kind, int pid);

#endif
