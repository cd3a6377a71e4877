/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one place that picks the architecture's registers for the kernel
 * side: clang -target bpf defines no CPU, so the Makefile says which with
 * -D__TARGET_ARCH_xxx (as libbpf's bpf_tracing.h expects).  Each file
 * gives the same names: struct profd_uregs and arch__*().
 */
#ifndef PROFD_BPF_ARCH_ARCH_BPF_H
#define PROFD_BPF_ARCH_ARCH_BPF_H

#if defined(__TARGET_ARCH_x86)
#include "bpf/arch/x86_64.bpf.h"
#elif defined(__TARGET_ARCH_arm64)
#include "bpf/arch/arm64.bpf.h"
#else
#error "no registers for this architecture in bpf/arch/ (make ARCH=x86 or ARCH=arm64)"
#endif

#endif
