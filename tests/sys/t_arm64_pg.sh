#!/bin/bash
# arm64 guests with postgres (issue 21): tests/sys/t_vm_kernels.sh's checks
# in arm64 guests under qemu-system-aarch64 (TCG, -cpu max: PAC and BTI):
# Debian 12's linux-image-arm64 (6.1: BTF, JIT) and a 6.12 built like the
# arm64 compute kernel (tests/vm/compute-6.12-arm64.config: no BTF, no JIT,
# 39-bit VAs), both booting the arm64 Debian root of tests/vm/root-arm64.sh
# (postgresql-15) over 9p, this clone at /profd, the static arm64 profd.
# In `make test` only with ARM64=1 (time), which .ci/run sets, in the
# guests' lane (tests/run.sh); alone: `make test-arm64`.
# Cached, the two guests take ~6 min of TCG on a quiet 2-core host (344 s
# in a full .ci/run), 17-19 min on a busy one; fresh,
# their kernel and root cost ~12 + 3.4 min of CPU first (docs/benchmarks.md,
# "arm64, emulated").
# No x86-64 build is needed (tests/lib/common.sh wants a BUILD to name).
export BUILD=${BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
PROFD_VM_ARCH=arm64 exec "$(dirname "$0")/t_vm_kernels.sh" "$@"
