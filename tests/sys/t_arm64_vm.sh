#!/bin/bash
# arm64 on an arm64 kernel (issue 21, item 4, first part): Debian 12's
# linux-image-arm64 (6.1, from the archive, unpacked, never installed)
# boots under qemu-system-aarch64 (TCG, -cpu max: pointer authentication
# and BTI on) from an initramfs of busybox, the static arm64 profd (make
# dist ARCH=arm64's) and three workloads built with
# -mbranch-protection=standard.  Inside, profd record takes:
#   - nofp_target (-fomit-frame-pointer): complete stacks through libc,
#     main;outer_fn;middle_fn;inner_fn, by CFI over PAC-signed frames; and
#     again with the JIT off (bpf_jit_enable 0), as on the compute kernels;
#   - clock_target: the vDSO's __kernel_clock_gettime under tick;
#   - sig_target: handler_work above the signal frame (__kernel_rt_sigreturn);
#   - the whole system under a dd loop: kernel stacks (el0_svc...) with the
#     user stack under them, from the user registers at the top of the
#     kernel stack (bpf/arch/arm64.bpf.h);
#   - record --heap of heap_target: libc's allocators probed (uprobe and
#     uretprobe on 6.1; the return address from x30), its three retaining
#     sites in the profile.
# postgres (pgbench, serve, the compute API, heap profiles) and the 6.12
# compute-like kernel: tests/sys/t_arm64_pg.sh.
#
# Caches: the kernel under /var/cache/profd-arm64/debian-6.1-arm64-VERSION
# (tests/vm/kernel-debian.sh --arch arm64), busybox under
# /var/cache/profd-arm64/vm (tests/vm/busybox-arm64.sh), keyed by versions.  Cost: ~1 min of TCG on this 2-core VM (the
# boot ~6 s, each 5 s profile ~13 s with its build), after
# tests/sys/t_arm64_build.sh's cross build.
. "$(dirname "$0")/../lib/common.sh"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
# The cross build is x86-64's: on an arm64 machine the whole suite is arm64's.
[ "$(uname -m)" = x86_64 ] || { echo "skip: not an x86-64 machine: make test runs natively here"; exit 77; }
QEMU=$(command -v qemu-system-aarch64) || fail "no qemu-system-aarch64 (scripts/deps.sh --test installs qemu-system-arm)"
command -v aarch64-linux-gnu-gcc >/dev/null || fail "no aarch64-linux-gnu-gcc"

# The kernel and busybox, fetched once per version (the scripts the arm64
# guests with a root use too: tests/vm/run.sh --arch arm64).
KDIR=$("$REPO/tests/vm/kernel-debian.sh" --arch arm64) || fail "no Debian arm64 kernel (apt-get update?)"
BUSYBOX=$("$REPO/tests/vm/busybox-arm64.sh") || fail "no arm64 busybox-static"
kernel=$KDIR/vmlinuz
[ -f "$kernel" ] || fail "no vmlinuz in $KDIR"

# The static arm64 profd, and the workloads.
if ! env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$REPO" --no-print-directory ARCH=arm64 \
	PROFD_DEPS_DONE=1 -j2 STATIC=1 build-static-arm64/profd >"$WORK/build.log" 2>&1; then
	tail -20 "$WORK/build.log"
	fail "the static arm64 profd did not build"
fi
S=$WORK/initramfs
mkdir -p "$S/bin" "$S/lib/aarch64-linux-gnu" "$S/proc" "$S/sys" "$S/tmp" "$S/dev" "$S/w"
cp "$BUSYBOX" "$S/bin/busybox"
cp "$REPO/build-static-arm64/profd" "$S/profd"
cp "$REPO/tests/vm/arm64-init.sh" "$S/init"
chmod 755 "$S/init"
for l in ld-linux-aarch64.so.1 libc.so.6 libm.so.6; do
	cp -L "/usr/lib/aarch64-linux-gnu/$l" "$S/lib/aarch64-linux-gnu/" || fail "no arm64 $l (libc6:arm64)"
done
cp -L /usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1 "$S/lib/"
aarch64-linux-gnu-gcc -O2 -g -fomit-frame-pointer -mbranch-protection=standard \
	-o "$S/w/nofp_target" "$REPO/tests/workloads/nofp_target.c" || fail "nofp_target"
for w in clock_target sig_target heap_target; do
	aarch64-linux-gnu-gcc -O2 -g -fno-omit-frame-pointer -mbranch-protection=standard \
		-o "$S/w/$w" "$REPO/tests/workloads/$w.c" -lm || fail "$w"
done
(cd "$S" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -1 >"$WORK/initramfs.cpio.gz"

start=$(date +%s)
timeout 900 "$QEMU" -M virt -cpu max,pauth-impdef=on -smp 2 -m 1024 -nographic -no-reboot \
	-kernel "$kernel" -initrd "$WORK/initramfs.cpio.gz" \
	-append "console=ttyAMA0 rdinit=/init panic=-1 quiet" </dev/null >"$WORK/console.log" 2>&1 ||
	{ tail -30 "$WORK/console.log"; fail "the arm64 guest failed (qemu exit $?)"; }
took=$(($(date +%s) - start))
tr -d '\r' <"$WORK/console.log" >"$WORK/console.txt"
grep -q '^GUEST-DONE' "$WORK/console.txt" || { tail -30 "$WORK/console.txt"; fail "the guest did not finish"; }
grep '^GUEST:' "$WORK/console.txt" | cut -c1-60
bad=$(awk '$1 == "RC" && $3 != 0' "$WORK/console.txt")
[ -z "$bad" ] || { grep -E 'error|warn' "$WORK/console.txt" | head; fail "a profd record in the guest failed: $bad"; }

grep -q '^JIT 0' "$WORK/console.txt" || fail "the guest could not turn its BPF JIT off"
python3 - "$WORK/console.txt" <<'PY' || fail "the arm64 guest's profiles"
import sys
text = open(sys.argv[1]).read().splitlines()
prof, cur = {}, None
for line in text:
    if line.startswith("BEGIN "):
        cur = prof.setdefault(line[6:], [])
    elif line.startswith("END "):
        cur = None
    elif cur is not None and line.strip():
        frames, n = line.rsplit(" ", 1)
        cur.append((frames.split(";"), int(n)))

def share(name, comm, pred):
    st = [(f, n) for f, n in prof[name] if f[0] == comm]
    tot = sum(n for _, n in st)
    ok = sum(n for f, n in st if pred(f[1:]))
    assert tot >= 100, f"{comm}: only {tot} samples"
    return ok, tot

def chain(*names):
    def p(f):
        i = 0
        for x in f:
            if i < len(names) and x == names[i]:
                i += 1
        return i == len(names)
    return p

checks = [
    ("nofp", "nofp_target", lambda f: f[:1] == ["_start"] and
     chain("main", "outer_fn", "middle_fn", "inner_fn")(f), 0.90,
     "complete through libc: _start..main;outer_fn;middle_fn;inner_fn (no frame pointers, PAC)"),
    ("nofp_nojit", "nofp_target", lambda f: f[:1] == ["_start"] and
     chain("main", "outer_fn", "middle_fn", "inner_fn")(f), 0.90,
     "the same with the BPF JIT off (every program interpreted)"),
    ("sigclock", "clock_target", chain("main", "tick", "__kernel_clock_gettime"), 0.40,
     "the vDSO's __kernel_clock_gettime under tick"),
    ("sigclock", "sig_target", lambda f: f[:1] == ["_start"] and chain("main", "spin_main", "handler_work")(f), 0.30,
     "handler_work above the signal frame, under main;spin_main"),
    ("sigclock", "sig_target", chain("spin_main", "__kernel_rt_sigreturn", "handler_work"), 0.30,
     "the signal frame named: spin_main;...;__kernel_rt_sigreturn;...;handler_work"),
]
for name, comm, pred, goal, what in checks:
    ok, tot = share(name, comm, pred)
    print(f"{comm}: {what}: {ok}/{tot} = {100 * ok / tot:.1f}%")
    if ok < goal * tot:
        for f, n in sorted((x for x in prof[name] if x[0][0] == comm), key=lambda x: -x[1])[:3]:
            print(f"  e.g. {n} x {';'.join(f)}")
    assert ok >= goal * tot, f"{comm}: {100 * ok / tot:.1f}% < {100 * goal}%"
# Kernel-mode samples of dd: kernel frames above user frames, the user
# part found from the registers at the top of the kernel stack.
st = [(f, n) for f, n in prof["system"] if f[0] == "dd"]
tot = sum(n for _, n in st)
both = sum(n for f, n in st if "el0_svc" in f and f.index("el0_svc") > 1 and
           any(x.startswith("busybox") for x in f[1:f.index("el0_svc")]))
print(f"dd: kernel stacks with the user stack under them: {both}/{tot}")
assert tot >= 50 and both >= 0.3 * tot, (both, tot)
# Heap probes: the sites of heap_target's retained blocks, by function.
heap = prof["heap"]
for fn in ("retain_malloc", "retain_calloc", "retain_memalign"):
    n = sum(v for f, v in heap if fn in f)
    print(f"heap: {fn}: {n}")
    assert n > 0, f"no heap samples under {fn}: {heap[:5]}"
# 48, 16 and 8 MiB retained: sampled, the order holds.
m, c, a = (sum(v for f, v in heap if fn in f) for fn in ("retain_malloc", "retain_calloc", "retain_memalign"))
assert m > c > a, (m, c, a)
PY
pass "arm64 guest (Debian 12 linux-image-arm64, TCG, PAC+BTI): complete CFI stacks through PAC-signed frames, vDSO, signal frames, kernel+user stacks, heap sites, JIT and interpreted (${took} s)"
