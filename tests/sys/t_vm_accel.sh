#!/bin/bash
# The VM harness chooses its accelerator by proof, not by open("/dev/kvm"):
# on machines whose /dev/kvm opens but whose KVM cannot run a guest (nested
# virtualization: qemu aborts with "failed to set MSR 0x10a", or the guest
# stays silent), tests/vm/run.sh must fall back to TCG, say why in one line,
# remember the verdict, and still run the command to its end.
#
# A broken KVM is simulated with a PROFD_VM_QEMU wrapper around the real
# qemu, and PROFD_VM_KVM_DEV=/dev/null (which opens) stands for a /dev/kvm
# that opens, so this runs the same on machines with or without KVM.
. "$(dirname "$0")/../lib/common.sh"
need_root
QEMU=$(command -v qemu-system-x86_64) || { echo "skip: no qemu-system-x86_64"; exit 77; }
K=debian-6.1 # fetched, not built: ready in seconds on a fresh machine

# The wrapper: MODE abort (as qemu does here under -accel kvm), silent (a
# guest that never prints), or works (KVM stands in as TCG, so the guest
# runs).  Every call's accelerator goes to $WORK/calls.
cat >"$WORK/qemu" <<WRAP
#!/bin/bash
a=\$(printf '%s\n' "\$@" | grep -A1 -x -- -accel | tail -1)
[ -n "\$a" ] && echo "\$a" >>"$WORK/calls"
if [ "\$a" = kvm ]; then
	case \$WRAP_MODE in
	abort) echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
	       echo "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3000: kvm_buf_set_msrs: Assertion \\\`ret == cpu->kvm_msr_buf->nmsrs' failed." >&2
	       kill -ABRT \$\$ ;;
	silent) exec sleep 100000 ;;
	works) args=(); for x in "\$@"; do [ "\$x" = kvm ] && x=tcg; args+=("\$x"); done; exec "$QEMU" "\${args[@]}" ;;
	esac
fi
exec "$QEMU" "\$@"
WRAP
chmod +x "$WORK/qemu"

# vm NAME MODE [ENV...]: run a command in the guest through the wrapper, with
# a verdict cache of this test's; its exit code, stdout and stderr in
# $WORK/NAME.{rc,out,err}.
vm() {
	local name=$1 mode=$2
	shift 2
	: >"$WORK/calls"
	env PROFD_VM_QEMU="$WORK/qemu" WRAP_MODE="$mode" PROFD_VM_KVM_DEV=/dev/null \
		PROFD_VM_ACCEL_CACHE="$WORK/verdicts" "$@" \
		"$TESTS/vm/run.sh" --kernel $K --timeout 600 -- sh -c 'echo in-guest; exit 3' \
		>"$WORK/$name.out" 2>"$WORK/$name.err" && rc=0 || rc=$?
	echo $rc >"$WORK/$name.rc"
	cp "$WORK/calls" "$WORK/$name.calls"
}
# ran NAME: the command ran to its end (its output and exit code came back).
ran() {
	[ "$(cat "$WORK/$1.rc")" = 3 ] && grep -qx in-guest "$WORK/$1.out" ||
		{ cat "$WORK/$1.err" >&2; fail "$1: exit $(cat "$WORK/$1.rc"), wanted the command's 3"; }
}
said() { # NAME PATTERN: run.sh said it on stderr
	grep -q -- "$2" "$WORK/$1.err" || { cat "$WORK/$1.err" >&2; fail "$1: run.sh did not say: $2"; }
}

# 1. qemu aborts under KVM: TCG, at once, and the reason is qemu's own.
vm abort abort
ran abort
said abort "^run.sh: accelerator tcg: KVM unusable here (.*failed to set MSR 0x10a"
grep -qx tcg "$WORK/abort.calls" && grep -qx kvm "$WORK/abort.calls" ||
	fail "abort: wanted a KVM try then TCG: $(tr '\n' ' ' <"$WORK/abort.calls")"
grep -q "^tcg .*MSR 0x10a" "$WORK/verdicts"/* || fail "abort: no tcg verdict kept"
pass "qemu aborting under KVM: the command ran under TCG; $(grep '^run.sh: accel' "$WORK/abort.err")"

# 2. The verdict is kept: the next run does not try KVM again.
vm cached abort
ran cached
grep -qx kvm "$WORK/cached.calls" && fail "cached: KVM tried again despite the verdict"
said cached "verdict cached in $WORK/verdicts/"
pass "the next run went straight to TCG (verdict cached)"

# 3. A silent KVM guest: killed at the proof's bound, then TCG.
rm -rf "$WORK/verdicts"
vm silent silent PROFD_VM_KVM_PROOF=5
ran silent
said silent "accelerator tcg: KVM unusable here (.*did not reach the command in 5s; it printed nothing)"
pass "a silent KVM guest: TCG after the 5 s proof"

# 4. A KVM that works is used, and its verdict kept.
rm -rf "$WORK/verdicts"
vm works works
ran works
said works "^run.sh: accelerator kvm$"
grep -qx kvm "$WORK/verdicts"/* || fail "works: no kvm verdict kept"
[ "$(sort -u "$WORK/works.calls")" = kvm ] || fail "works: wanted KVM only: $(tr '\n' ' ' <"$WORK/works.calls")"
pass "a KVM guest that reaches the command: KVM kept"

# 5. PROFD_VM_ACCEL overrides the choice: tcg never tries KVM; kvm does not
#    fall back (a broken KVM is then an error, not a silent TCG run).
vm forced_tcg abort PROFD_VM_ACCEL=tcg
ran forced_tcg
grep -qx kvm "$WORK/forced_tcg.calls" && fail "PROFD_VM_ACCEL=tcg tried KVM"
said forced_tcg "accelerator tcg: PROFD_VM_ACCEL=tcg"
rm -rf "$WORK/verdicts"
vm forced_kvm abort PROFD_VM_ACCEL=kvm
[ "$(cat "$WORK/forced_kvm.rc")" = 125 ] || fail "PROFD_VM_ACCEL=kvm with a broken KVM: exit $(cat "$WORK/forced_kvm.rc"), wanted 125"
grep -qx tcg "$WORK/forced_kvm.calls" && fail "PROFD_VM_ACCEL=kvm fell back to TCG"
pass "PROFD_VM_ACCEL=tcg and =kvm are obeyed"
