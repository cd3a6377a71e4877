#!/bin/bash
# arm64 (issue 21, items 1 and 3): `make ARCH=arm64` cross-builds profd, its
# BPF object (-D__TARGET_ARCH_arm64) and its unit tests on this x86-64
# machine, and the unit tests pass on arm64 code under qemu-user: the
# symbolizer and CFI reader on arm64 objects, the probe placer, and the
# unwinder on a process that samples itself in code built without frame
# pointers and with pointer authentication and BTI
# (tests/unit/cpu/test_unwind_self.c: the leaf's caller from x30, PAC-signed
# return addresses stripped, CFI with DW_CFA_AARCH64_negate_ra_state).
#
# What it can't show: the BPF side running on an arm64 kernel (no arm64
# guest is booted yet; docs/operations.md's matrix says what ran where).
#
# Cost: the cross build (~2 min on 2 cores when nothing is built yet, less
# with build-arm64/ from an earlier run) and the unit tests under qemu
# (~1 min).
. "$(dirname "$0")/../lib/common.sh"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
# The cross build is x86-64's: on an arm64 machine the whole suite is arm64's.
[ "$(uname -m)" = x86_64 ] || { echo "skip: not an x86-64 machine: make test runs natively here"; exit 77; }
B=$REPO/build-arm64

for tool in aarch64-linux-gnu-gcc aarch64-linux-gnu-objdump qemu-aarch64-static; do
	command -v $tool >/dev/null || fail "no $tool (scripts/deps.sh --test installs it)"
done
dpkg --print-foreign-architectures | grep -qx arm64 ||
	fail "dpkg has no arm64 architecture (scripts/deps.sh --test adds it)"

# Criterion runs each test in a process it starts from its own binary: the
# kernel must run an arm64 binary through qemu by itself (binfmt_misc).
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
	[ -e /proc/sys/fs/binfmt_misc/register ] ||
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || {
		echo "skip: binfmt_misc can't be mounted here (a container without it?): no arm64 unit tests"
		exit 77
	}
	update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 ||
		fail "cannot register qemu-aarch64 with binfmt_misc (update-binfmts --enable qemu-aarch64)"
fi
[ "$(head -1 /proc/sys/fs/binfmt_misc/qemu-aarch64)" = enabled ] ||
	fail "binfmt_misc's qemu-aarch64 is registered but not enabled"

# The build: profd, the unit binaries, the workloads they read (named as
# the Makefile's rules name them, relative: an absolute path matches no rule
# and an old file would pass for up to date).
layers=$(ls "$REPO/tests/unit")
targets="build-arm64/profd"
for l in $layers; do targets="$targets build-arm64/tests/unit_$l"; done
for w in "$REPO"/tests/workloads/*.c; do targets="$targets build-arm64/tests/$(basename "$w" .c)"; done
if ! env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$REPO" --no-print-directory ARCH=arm64 \
	PROFD_DEPS_DONE=1 -j2 $targets >"$WORK/build.log" 2>&1; then
	tail -30 "$WORK/build.log"
	fail "make ARCH=arm64 failed"
fi
file -L "$B/profd" | grep -q 'ARM aarch64' || fail "build-arm64/profd: $(file -L "$B/profd")"
[ -s "$B/bpf/cpu.bpf.o" ] && [ -s "$B/bpf/profd.skel.h" ] || fail "no arm64 BPF object"
pass "make ARCH=arm64: build-arm64/profd is an AArch64 binary, with its BPF object"

SYSROOT=$("$REPO/scripts/arm64-sysroot.sh") || fail "scripts/arm64-sysroot.sh failed"
export LD_LIBRARY_PATH=$SYSROOT/usr/lib/aarch64-linux-gnu
"$B/profd" --version >"$WORK/version" 2>&1 || fail "the arm64 profd does not start: $(cat "$WORK/version")"
grep -q '^elfutils: 0\.' "$WORK/version" || fail "arm64 profd --version: $(cat "$WORK/version")"
want=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)
[ "$(head -1 "$WORK/version")" = "profd $want" ] ||
	fail "build-arm64/profd is not this tree's: $(head -1 "$WORK/version"), git says $want"
pass "the arm64 profd runs under qemu-user: $(head -1 "$WORK/version")"

# The workload built as production arm64 code is: PAC and BTI, and its CFI
# toggles the return address's signing state.
# (Into files: grep -q closing a pipe early fails it under pipefail.)
aarch64-linux-gnu-readelf -wf "$B/tests/nofp_target" >"$WORK/cfi.txt"
grep -q 'DW_CFA_AARCH64_negate_ra_state' "$WORK/cfi.txt" ||
	fail "nofp_target's CFI has no DW_CFA_AARCH64_negate_ra_state: built without pac-ret?"
aarch64-linux-gnu-objdump -d "$B/tests/nofp_target" >"$WORK/dis.txt"
grep -qw paciasp "$WORK/dis.txt" || fail "nofp_target has no paciasp"

# Every layer's unit tests, on arm64 code.  CROSS_COMPILE: the binutils the
# symbolizer's tests use as oracles.
failed=""
for l in $layers; do
	if ! (cd "$B" && CROSS_COMPILE=aarch64-linux-gnu- BUILD=$B TESTS=$REPO/tests \
		timeout 900 "$B/tests/unit_$l" --verbose >"$WORK/unit_$l.log" 2>&1); then
		failed="$failed $l"
		grep -E 'FAIL|Assertion|^\[----\]   ' "$WORK/unit_$l.log" | head -20
	fi
	echo "unit_$l (arm64): $(grep 'Synthesis' "$WORK/unit_$l.log")"
done
[ -z "$failed" ] || fail "arm64 unit tests failed under qemu-user:$failed"
grep -q '^\[PASS\] unwind_self::leaf_link_register_and_signed_return_addresses' "$WORK/unit_cpu.log" ||
	fail "the arm64 self-unwinding test did not pass (skipped?)"
grep -q '^\[PASS\] unwind_self::plt_stub_unwinds_to_its_caller' "$WORK/unit_cpu.log" ||
	fail "the arm64 PLT stub test did not pass"
grep -q 'no pointer authentication on this CPU' "$WORK/unit_cpu.log" &&
	fail "qemu's CPU had no pointer authentication: nothing was signed"
grep -q '^\[PASS\] uprobe_place::arm64' "$WORK/unit_heap.log" ||
	fail "the arm64 probe placement cases did not run"
pass "arm64 unit tests under qemu-user: unwinding through PAC-signed frames, the link register and PLT stubs without CFI, BTI-aware probe placement"

# make dist ARCH=arm64: the static tarball, named for aarch64, whose profd
# runs alone (no interpreter, no libraries), with the arm64 heap preload
# library.  (make dist's two steps, with a version of the test's own.)
DIST=$WORK/dist
if ! env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$REPO" --no-print-directory ARCH=arm64 \
	PROFD_DEPS_DONE=1 -j2 STATIC=1 build-static-arm64/profd build-static-arm64/libprofd_heap.so \
	>"$WORK/dist.log" 2>&1 ||
	! "$REPO/scripts/dist.sh" "$REPO/build-static-arm64/profd" test "$DIST" \
		"$REPO/build-static-arm64/libprofd_heap.so" >>"$WORK/dist.log" 2>&1; then
	tail -20 "$WORK/dist.log"
	fail "make dist ARCH=arm64 failed"
fi
grep -qF 'STATIC=1 $(DIST_BUILD)/profd $(DIST_BUILD)/libprofd_heap.so' "$REPO/Makefile" ||
	fail "the Makefile's dist rule no longer makes what this test makes"
tarball=$DIST/profd-test-aarch64-linux.tar.gz
[ -f "$tarball" ] || fail "no $tarball: $(ls "$DIST")"
tar xzf "$tarball" -C "$DIST"
file "$DIST/profd-test-aarch64-linux/profd" | grep -q 'ARM aarch64.*static' ||
	fail "the packed profd: $(file "$DIST/profd-test-aarch64-linux/profd")"
env -u LD_LIBRARY_PATH "$DIST/profd-test-aarch64-linux/profd" --version >"$WORK/dist.version"
grep -q '^build: static' "$WORK/dist.version" ||
	fail "the packed arm64 profd does not say it is static: $(cat "$WORK/dist.version")"
# Its preload library: arm64, and it loads into an arm64 program (ld.so's
# own account of the libraries it initialises) that then runs to its end.
lib=$DIST/profd-test-aarch64-linux/libprofd_heap.so
file "$lib" | grep -q 'shared object, ARM aarch64' || fail "the packed library: $(file "$lib")"
LD_PRELOAD=$lib LD_DEBUG=libs "$B/tests/mallocbench" 1 >"$WORK/preload.out" 2>"$WORK/preload.err" ||
	fail "an arm64 program with the packed library preloaded failed: $(tail -5 "$WORK/preload.err")"
grep -q "calling init: $lib" "$WORK/preload.err" ||
	fail "ld.so did not load $lib: $(grep -i profd "$WORK/preload.err" | head -5)"
pass "make dist ARCH=arm64: $(basename "$tarball"), a static AArch64 profd that runs alone, and an" \
	"AArch64 libprofd_heap.so that an arm64 program preloads"
