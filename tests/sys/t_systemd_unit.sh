#!/bin/bash
# systemd/profd.service: `systemd-analyze verify` is clean, the hardening
# scores what docs/operations.md says, and `make install` puts the binary
# and the unit where PREFIX and DESTDIR say, ExecStart pointing at it.
. "$(dirname "$0")/../lib/common.sh"
command -v systemd-analyze >/dev/null || { echo "skip: no systemd-analyze"; exit 77; }
ROOT=$(cd "$TESTS/.." && pwd)
UNIT=$ROOT/systemd/profd.service
[ -r "$UNIT" ] || fail "no $UNIT"

# verify wants ExecStart to exist: point it at the binary under test.
mkdir -p "$WORK/unit"
sed "s|/usr/local/bin/profd|$PROFD|" "$UNIT" >"$WORK/unit/profd.service"
systemd-analyze verify "$WORK/unit/profd.service" >"$WORK/verify.out" 2>&1 ||
	fail "systemd-analyze verify: $(cat "$WORK/verify.out")"
[ ! -s "$WORK/verify.out" ] || fail "systemd-analyze verify is not clean: $(cat "$WORK/verify.out")"
pass "systemd-analyze verify: clean"

# The figure docs/operations.md records; fail if hardening regresses past it.
systemd-analyze security --offline=true "$WORK/unit/profd.service" >"$WORK/security.out" 2>&1 || true
score=$(sed -n 's/.*Overall exposure level for profd.service: \([0-9.]*\).*/\1/p' "$WORK/security.out")
[ -n "$score" ] || fail "no exposure level: $(tail -5 "$WORK/security.out")"
documented=$(sed -n 's/.*exposure level[^0-9]*\([0-9]\.[0-9]\).*/\1/p' "$ROOT/docs/operations.md" | head -1)
[ -n "$documented" ] || fail "docs/operations.md does not record the exposure level"
awk -v s="$score" -v d="$documented" 'BEGIN {exit !(s <= d)}' ||
	fail "exposure level $score is worse than the documented $documented"
pass "systemd-analyze security: exposure $score (documented: $documented)"

grep -qx 'Type=notify' "$UNIT" || fail "the unit is not Type=notify"
grep -qx 'ExecStart=/usr/local/bin/profd serve' "$UNIT" || fail "ExecStart is not /usr/local/bin/profd serve"
grep -q '^CapabilityBoundingSet=.*CAP_SYS_ADMIN' "$UNIT" && fail "the unit keeps CAP_SYS_ADMIN"
pass "Type=notify, ExecStart=/usr/local/bin/profd serve, no CAP_SYS_ADMIN"

make -s -C "$ROOT" install DESTDIR="$WORK/dest" PREFIX=/opt/profd >"$WORK/install.out" 2>&1 ||
	fail "make install: $(cat "$WORK/install.out")"
[ -x "$WORK/dest/opt/profd/bin/profd" ] || fail "make install put no binary in PREFIX/bin"
inst=$WORK/dest/opt/profd/lib/systemd/system/profd.service
[ -r "$inst" ] || fail "make install put no unit in PREFIX/lib/systemd/system"
grep -qx 'ExecStart=/opt/profd/bin/profd serve' "$inst" || fail "installed ExecStart: $(grep ^ExecStart "$inst")"
# Stripped, its debug information by build ID, the examples beside.
bin="$WORK/dest/opt/profd/bin/profd"
readelf -SW "$bin" | grep -q '\.symtab' && fail "make install put an unstripped binary"
id=$(readelf -nW "$bin" | awk '/Build ID:/ {print $NF}')
dbg="$WORK/dest/opt/profd/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
[ -r "$dbg" ] || fail "make install put no debug file at $dbg"
readelf -SW "$dbg" 2>/dev/null | grep -q '\.debug_info' || fail "$dbg has no DWARF"
for f in config.example.json profd.inittab; do
	[ -r "$WORK/dest/opt/profd/share/profd/$f" ] || fail "make install put no share/profd/$f"
done
"$bin" --version >/dev/null || fail "the installed profd does not run"
pass "make install DESTDIR=... PREFIX=/opt/profd: binary (stripped; debug file by build ID), unit, ExecStart rewritten, the examples"
