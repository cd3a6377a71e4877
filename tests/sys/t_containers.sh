#!/bin/bash
# Targets the way containers and systemd's PrivateTmp run them:
#  - on overlayfs, where the device and inode the kernel reports for a
#    mapping differ from what stat() says: --exe by path and by name match,
#    and the binary is symbolized;
#  - in another mount namespace, at a path that does not exist in profd's:
#    the binary is opened through the process's own root and symbolized.
. "$(dirname "$0")/../lib/common.sh"
need_root
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	{ echo "skip: no overlayfs"; exit 77; }
command -v unshare >/dev/null || { echo "skip: no unshare"; exit 77; }

O=$WORK/ovl
mkdir -p $O/lower $O/upper $O/work $O/merged
cp "$BUILD/tests/inline_target" $O/lower/
mount -t overlay overlay -o lowerdir=$O/lower,upperdir=$O/upper,workdir=$O/work $O/merged
trap 'umount -l $O/merged 2>/dev/null; cleanup_common' EXIT

check() { # FILE WHAT: samples of inline_target, hot_a symbolized with its caller chain
	python3 - "$1" "$2" <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
tot = p.total()
hot = sum(s["values"][0] for s in p.samples if p.frames(s)[:1] in (["hot_a"], ["mix"])
          and "run_workload" in p.frames(s))
assert tot > 50, f"{sys.argv[2]}: only {tot} samples"
assert hot >= 0.3 * tot, f"{sys.argv[2]}: hot_a<-run_workload in {hot} of {tot} samples"
print(f"ok: {sys.argv[2]}: {tot} samples, hot_a symbolized with its callers in {100 * hot // tot}%")
PY
}

$O/merged/inline_target 60 >/dev/null &
T=$!
PIDS_TO_KILL+=($T)
sleep 0.3
"$PROFD" record --exe $O/merged/inline_target --seconds 3 --frequency 499 -o "$WORK/path.pb.gz"
check "$WORK/path.pb.gz" "overlayfs, --exe by path"
"$PROFD" record --exe inline_target --seconds 3 --frequency 499 -o "$WORK/name.pb.gz"
check "$WORK/name.pb.gz" "overlayfs, --exe by name"
kill $T

# Processes that have exited when the profile is built: their map_files are
# gone and their binary's path names another inode, so no file can be
# opened for them.  One still running that maps the same file lends its
# mapping (stackprof.c's lend); before, their samples went unnamed.
# The short ones are sampled first (the build takes stacks in the order
# they were first seen), the one that lives on only after they have gone.
start_record --exe $O/merged/inline_target --seconds 4 --frequency 499 --labels pid \
	-o "$WORK/exited.pb.gz"
SHORT=()
for _ in 1 2; do
	$O/merged/inline_target 1 >/dev/null &
	SHORT+=($!)
done
PIDS_TO_KILL+=("${SHORT[@]}")
wait "${SHORT[@]}"
$O/merged/inline_target 30 >/dev/null &
T=$!
PIDS_TO_KILL+=($T)
wait $RECORD_PID || fail "profd record: $(tail -3 "$WORK/record.err")"
kill $T
python3 - "$WORK/exited.pb.gz" "${SHORT[@]}" <<'PY' || fail "overlayfs, exited processes: their frames unnamed"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
for pid in sys.argv[2:]:
    mine = [s for s in p.samples if s["labels"].get("pid") == pid]
    tot = sum(s["values"][0] for s in mine)
    named = sum(s["values"][0] for s in mine if "run_workload" in p.frames(s))
    assert tot >= 5, f"pid {pid}: {tot} samples"
    assert named >= 0.9 * tot, f"pid {pid}: run_workload in {named} of {tot} samples"
print(f"ok: overlayfs, 2 processes exited before the build: their frames named through a live one's mapping")
PY

# A private mount namespace: /mnt/profd-private exists only in there.
mkdir -p /mnt/profd-private
unshare -m --propagation private sh -c "
	mount -t tmpfs tmpfs /mnt/profd-private &&
	cp '$BUILD/tests/inline_target' /mnt/profd-private/ &&
	exec /mnt/profd-private/inline_target 60" >/dev/null &
U=$!
PIDS_TO_KILL+=($U)
for _ in $(seq 50); do
	[ "$(readlink /proc/$U/exe 2>/dev/null)" = /mnt/profd-private/inline_target ] && break
	sleep 0.1
done
[ ! -e /mnt/profd-private/inline_target ] || fail "the private mount leaked into profd's namespace"
"$PROFD" record --pid $U --seconds 3 --frequency 499 -o "$WORK/ns.pb.gz"
check "$WORK/ns.pb.gz" "another mount namespace, --pid"
"$PROFD" record --exe inline_target --seconds 3 --frequency 499 -o "$WORK/nsname.pb.gz"
check "$WORK/nsname.pb.gz" "another mount namespace, --exe by name"
kill $U
rmdir /mnt/profd-private 2>/dev/null || true
