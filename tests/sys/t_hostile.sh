#!/bin/bash
# Processes and files that other users control, against the daemon that
# runs as root (issue #11): a binary overwritten in place (smaller, then the
# same size with another function), debug links that are a FIFO, a symlink
# to /dev/zero and a huge sparse file, a target's pid reused by another
# process, /proc/PID/maps of 30,000 mappings with 4 KB paths, and churn of
# short-lived processes and binaries against the caches' bounds.  After
# each, /health answers promptly and the profile names what ran.
# Then ELF files another user owns that claim sections far larger than
# they hold (issue #25): a 600 MiB string table in a sparse file, 600 MiB
# of DWARF; a user's program that calls itself postgres; debug links to
# a root-only file and out of a chroot (issue #25).
# PARTS="overwrite fifo root reuse maps churn bombs spoof links" picks some.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

PARTS=${PARTS:-overwrite fifo root reuse maps churn bombs spoof links}
want() { [[ " $PARTS " == *" $1 "* ]]; }
metric() { curl -s -m 10 "$BASE/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# health_watch: probe /health every 0.2 s until stopped; the slowest answer
# (ms, 99999 for none within 20 s) ends up in $WORK/health.max.
health_watch() {
	(
		max=0
		while [ ! -e "$WORK/health.stop" ]; do
			t0=$(date +%s%N)
			curl -sf -m 20 -o /dev/null "$BASE/health" || { echo 99999 >"$WORK/health.max"; exit; }
			ms=$((($(date +%s%N) - t0) / 1000000))
			[ $ms -gt $max ] && max=$ms
			echo $max >"$WORK/health.max"
			sleep 0.2
		done
	) &
	WATCH=$!
}
health_unwatch() { # WHAT LIMIT_MS
	touch "$WORK/health.stop"
	wait $WATCH || true
	rm -f "$WORK/health.stop"
	local max
	max=$(cat "$WORK/health.max")
	[ "$max" -lt "$2" ] || fail "$1: /health took ${max} ms (limit $2 ms)"
	echo "$1: slowest /health ${max} ms"
}

# scrape NAME SECONDS: a whole-system profile into $WORK/NAME.pb.gz.
scrape() {
	local code rc=0
	rm -f "$WORK/$1.pb.gz"
	code=$(curl -sS -m 300 -o "$WORK/$1.pb.gz" -w '%{http_code}' \
		"$BASE/debug/pprof/profile?seconds=$2&frequency=199" 2>"$WORK/curl.err") || rc=$?
	[ "$code" = 200 ] || fail "$1: scrape answered $code (curl $rc: $(cat "$WORK/curl.err"))
$(tail -5 "$WORK/serve.err")"
}

# samples_of FILE PID: "FUNCTION SAMPLES" lines for the leaf functions of pid's samples.
samples_of() {
	python3 - "$1" "$2" <<'PY'
import sys, pprof_raw
from collections import Counter
p = pprof_raw.load(sys.argv[1])
c = Counter()
for s in p.samples:
    if s["labels"].get("pid") == sys.argv[2]:
        f = p.frames(s)
        c[f[0] if f else None] += s["values"][0]
for k, v in c.most_common():
    print(k, v)
PY
}

# A program that spins in FN; BIG adds 4 MB of initialised data.
cat >"$WORK/spin.c" <<'EOF'
#ifdef BIG
const char pad[4 << 20] = {1};
#endif
__attribute__((noinline)) void FN(void)
{
	for (volatile unsigned long x = 0;; x++)
		;
}
int main(void) { FN(); return 0; }
EOF
cc -O1 -g -DFN=spin_old -DBIG -o "$WORK/big" "$WORK/spin.c"
cc -O1 -g -DFN=spin_new -o "$WORK/small" "$WORK/spin.c"
cc -O1 -g -DFN=spin_two -o "$WORK/same" "$WORK/spin.c"
# Trailing bytes after an ELF file change nothing: make the two the same size.
sz=$(stat -c %s "$WORK/small")
[ "$(stat -c %s "$WORK/same")" -gt "$sz" ] && sz=$(stat -c %s "$WORK/same")
truncate -s "$sz" "$WORK/small" "$WORK/same"
[ "$(stat -c %s "$WORK/big")" -gt $((4 << 20)) ] || fail "the big binary is not over 4 MB"

PORT=$(free_port 17480)
CONF=$WORK/profd.json
# Small bounds, so that the churn below goes past them; pid labels to tell processes apart.
DEFAULT_CONF='{"max_processes": 300, "max_objects": 48, "labels": "all"}'
echo "${HOSTILE_CONF:-$DEFAULT_CONF}" >"$CONF"
serve "$PORT" --config "$CONF"
DAEMON=$SERVE_PID

# run_spin FILE: start it; sets SPIN.
run_spin() {
	"$1" &
	SPIN=$!
	PIDS_TO_KILL+=("$SPIN")
}
stop_spin() { kill "$SPIN" 2>/dev/null; wait "$SPIN" 2>/dev/null || true; }

# expect_leaf NAME PID FUNCTION ABSENT: pid's samples are mostly in FUNCTION, none in ABSENT.
expect_leaf() {
	local out
	out=$(samples_of "$WORK/$1.pb.gz" "$2")
	echo "$out" | head -3 | sed "s/^/$1: /"
	echo "$out" | awk -v f="$3" '$1 == f && $2 >= 10 {ok=1} END {exit !ok}' ||
		fail "$1: fewer than 10 samples of pid $2 in $3: $out"
	! echo "$out" | awk -v f="$4" '$1 == f {bad=1} END {exit !bad}' ||
		fail "$1: pid $2 has samples in $4, a function of the file it replaced"
}

if want overwrite; then
	mkdir -p "$WORK/bin"
	APP=$WORK/bin/app
	cp "$WORK/big" "$APP"
	run_spin "$APP"
	scrape ow1 3
	expect_leaf ow1 "$SPIN" spin_old spin_new
	stop_spin
	# In place: the same inode, now a smaller file.
	ino=$(stat -c %i "$APP")
	cp "$WORK/small" "$APP"
	[ "$(stat -c %i "$APP")" = "$ino" ] || fail "cp did not overwrite in place"
	run_spin "$APP"
	scrape ow2 3
	kill -0 $DAEMON 2>/dev/null || fail "the daemon died after a binary shrank under it"
	expect_leaf ow2 "$SPIN" spin_new spin_old
	stop_spin
	# The same size, another function.
	cp "$WORK/same" "$APP"
	[ "$(stat -c %i "$APP")" = "$ino" ] || fail "cp did not overwrite in place"
	run_spin "$APP"
	scrape ow3 3
	expect_leaf ow3 "$SPIN" spin_two spin_new
	stop_spin
	pass "a binary overwritten in place, smaller and then the same size: the new functions named"
fi

if want fifo; then
	# A debug link whose file is a FIFO, a symlink to /dev/zero, a huge
	# sparse file.  Without a build ID the link's CRC is what matches, so
	# the candidate's contents would be read whole.
	mkdir -p "$WORK/dbg"
	i=0
	for kind in fifo zero huge; do
		i=$((i + 1))
		b=$WORK/dbg/prog_$kind
		cc -O1 -g -DFN=spin_dbg_$kind -Wl,--build-id=none -o "$b" "$WORK/spin.c"
		objcopy --only-keep-debug "$b" "$b.debug"
		objcopy --strip-debug --add-gnu-debuglink="$b.debug" "$b"
		rm "$b.debug"
		case $kind in
		fifo) mkfifo "$b.debug" ;;
		zero) ln -s /dev/zero "$b.debug" ;;
		huge) truncate -s 64G "$WORK/dbg/huge"; ln -s "$WORK/dbg/huge" "$b.debug" ;;
		esac
		run_spin "$b"
		health_watch
		scrape dbg_$kind 3
		health_unwatch "debug link to a $kind" 10000
		expect_leaf dbg_$kind "$SPIN" spin_dbg_$kind none
		stop_spin
	done
	pass "debug links to a FIFO, /dev/zero and a 64 GB file: skipped, the daemon kept serving"
fi

if want root; then
	# A process in another root whose debug file is an absolute symlink
	# there: resolved inside its root (as the process sees it), never
	# against the daemon's own.
	R=$WORK/root
	mkdir -p "$R/bin" "$R/realdebug"
	cc -O1 -g -static -DFN=spin_chroot -Wl,--build-id -o "$R/bin/spin" "$WORK/spin.c"
	id=$(readelf -n "$R/bin/spin" | awk '/Build ID/ {print $3}')
	objcopy --only-keep-debug "$R/bin/spin" "$R/realdebug/$id.debug"
	objcopy --strip-debug "$R/bin/spin"
	mkdir -p "$R/usr/lib/debug/.build-id/${id:0:2}"
	ln -s "/realdebug/$id.debug" "$R/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	[ ! -e "/realdebug/$id.debug" ] || fail "/realdebug exists on the host"
	chroot "$R" /bin/spin &
	SPIN=$!
	PIDS_TO_KILL+=("$SPIN")
	scrape root 3
	python3 - "$WORK/root.pb.gz" "$SPIN" <<'PY' || fail "the debug file inside the process's root was not used"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
lines = [l for s in p.samples if s["labels"].get("pid") == sys.argv[2]
         for lid in s["locs"] for l in p.locations[lid]["lines"] if l[0] == "spin_chroot"]
print("root: spin_chroot frames", len(lines), "file", lines[0][1] if lines else None)
sys.exit(not (lines and lines[0][1].endswith("spin.c") and lines[0][2] > 0))
PY
	stop_spin
	pass "a debug file symlinked absolutely inside a process's root: found there"
fi

if want reuse; then
	# The helper forks until its child gets pid P (ns_last_pid), which then spins.
	cat >"$WORK/reuse.c" <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
__attribute__((noinline)) void intruder_fn(void)
{
	for (volatile unsigned long x = 0;; x++)
		;
}
int main(int argc, char **argv)
{
	int want = atoi(argv[1]);
	/* Started while pid want still runs: once it is gone (and reaped)... */
	while (kill(want, 0) == 0)
		usleep(10000);
	for (int i = 0; i < 2000; i++) {
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		if (!f || fprintf(f, "%d", want - 1) < 0 || fclose(f))
			return 2;
		pid_t c = fork();
		if (c == 0) {
			if (getpid() == want)
				intruder_fn();
			_exit(0);
		}
		if (c == want) {
			printf("%d\n", c);
			return 0;
		}
		waitpid(c, NULL, 0);
	}
	return 1;
}
EOF
	cc -O1 -o "$WORK/reuse" "$WORK/reuse.c"
	sed 's/FN()/victim_fn()/; s/void FN/void victim_fn/' "$WORK/spin.c" >"$WORK/victim.c"
	cc -O1 -g -o "$WORK/victim" "$WORK/victim.c"
	run_spin "$WORK/victim"
	P=$SPIN
	curl -s -m 60 -o "$WORK/reuse.pb" -w '%{http_code}' -X POST \
		-H "Content-Type: application/json" "$BASE/profile/cpu" \
		-d "{\"profiler\": {\"BccProfile\": null}, \"sampling_frequency\": 199, \"timeout_seconds\": 5, \"targets\": {\"pids\": [$P]}}" \
		>"$WORK/reuse.code" &
	POST=$!
	# The victim runs for a second of the profile, then its pid goes to another.
	for _ in $(seq 100); do
		[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$BASE/profile/cpu")" = 200 ] && break
		sleep 0.1
	done
	sleep 1
	"$WORK/reuse" "$P" >"$WORK/reuse.out" &
	REUSE=$!
	stop_spin
	wait $REUSE || fail "could not get pid $P again"
	got=$(cat "$WORK/reuse.out")
	PIDS_TO_KILL+=("$got")
	wait $POST
	kill "$got"
	[ "$(cat "$WORK/reuse.code")" = 200 ] || fail "POST /profile/cpu: $(cat "$WORK/reuse.code")"
	gzip -t "$WORK/reuse.pb" 2>/dev/null && mv "$WORK/reuse.pb" "$WORK/reuse.pb.gz" ||
		gzip -c "$WORK/reuse.pb" >"$WORK/reuse.pb.gz"
	out=$(samples_of "$WORK/reuse.pb.gz" "$P")
	echo "$out" | sed 's/^/reuse: /'
	echo "$out" | awk '$1 == "victim_fn" && $2 >= 10 {ok=1} END {exit !ok}' ||
		fail "the victim's own samples are missing: $out"
	[ "$got" = "$P" ] || fail "the helper got pid $got, not $P"
	python3 - "$WORK/reuse.pb.gz" "$P" <<'PY' || fail "samples of the process that reused pid $P"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
bad = sum(s["values"][0] for s in p.samples
          if "intruder_fn" in p.frames(s) or s["labels"].get("pid") != sys.argv[2])
print("reuse: samples of others:", bad)
sys.exit(bad > 0)
PY
	pass "a target's pid reused by another process: none of its samples in the profile"
fi

if want maps; then
	# 4 processes with 30,000 executable mappings each of a file whose
	# path is ~4 KB: ~125 MB of /proc/PID/maps apiece.
	d=$WORK/m
	for _ in $(seq 16); do d=$d/$(printf 'd%.0s' $(seq 250)); done
	mkdir -p "$d"
	head -c 65536 /dev/zero >"$d/f"
	cat >"$WORK/mapper.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
__attribute__((noinline)) void mapper_spin(void)
{
	for (volatile unsigned long x = 0;; x++)
		;
}
int main(int argc, char **argv)
{
	int fd = open(argv[1], O_RDONLY), n = atoi(argv[2]);
	char *base = (char *)0x100000000000ul;
	for (int i = 0; i < n; i++) {
		/* A page apart and at alternating offsets: no two merge. */
		void *p = mmap(base + 2ul * 4096 * i, 4096, PROT_READ | PROT_EXEC,
			       MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, (i % 2) * 4096);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	mapper_spin();
}
EOF
	cc -O1 -g -o "$WORK/mapper" "$WORK/mapper.c"
	MAPPERS=()
	for k in 1 2 3 4; do
		"$WORK/mapper" "$d/f" 30000 >"$WORK/mapper$k.out" &
		MAPPERS+=($!)
		PIDS_TO_KILL+=($!)
	done
	for k in 1 2 3 4; do
		for _ in $(seq 600); do grep -q ready "$WORK/mapper$k.out" && break; sleep 0.1; done
		grep -q ready "$WORK/mapper$k.out" || fail "mapper $k did not map its 30,000 mappings"
	done
	rss0=$(awk '/VmRSS/ {print $2}' /proc/$DAEMON/status)
	health_watch
	t0=$(date +%s%N)
	scrape maps 3
	ms=$((($(date +%s%N) - t0) / 1000000))
	health_unwatch "hostile maps" 15000
	rss1=$(awk '/VmRSS/ {print $2}' /proc/$DAEMON/status)
	echo "maps: a 3 s scrape answered in $ms ms; daemon RSS ${rss0} -> ${rss1} KiB"
	# Reading 4 x 4 MiB of maps costs seconds of kernel time on a loaded
	# 2-core machine; unbounded it was minutes.
	[ $ms -lt 30000 ] || fail "a 3 s scrape took $ms ms beside hostile maps"
	# Not under ASan: its quarantine keeps freed memory resident on purpose.
	[ -n "${SANITIZE:-}" ] || [ $((rss1 - rss0)) -lt 65536 ] ||
		fail "RSS grew by $((rss1 - rss0)) KiB reading hostile maps"
	python3 - "$WORK/maps.pb.gz" "${MAPPERS[@]}" <<'PY'
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
pids = set(sys.argv[2:])
n = sum(s["values"][0] for s in p.samples if s["labels"].get("pid") in pids)
assert n > 0, "no samples of the mappers"
cut = [c for c in p.comments if "memory maps" in c and "cut" in c]
assert cut, "no comment says the maps were cut: %r" % p.comments
print("maps:", n, "mapper samples;", cut[0])
PY
	grep -q "maps.*cut\|cut.*maps" "$WORK/serve.err" || fail "the log does not say maps were cut"
	for m in "${MAPPERS[@]}"; do kill "$m"; done
	pass "30,000 mappings with 4 KB paths in 4 processes: cut at the limit, said so, scrape prompt"
fi

if want churn; then
	# 2,000 short-lived processes of 20 binaries with distinct names and
	# contents, during whole-system scrapes.  The tables stay within the
	# bounds the config set (300 processes, 48 objects), and so do fds.
	mkdir -p "$WORK/churn"
	for k in $(seq 20); do
		cc -O1 -DFN=churn_$k -o "$WORK/churn/c$k" -x c - <<EOF
int main(void) { volatile unsigned long x = 0; while (x < 3000000) x++; return $k == 0; }
EOF
	done
	fds0=$(ls /proc/$DAEMON/fd | wc -l)
	rss0=$(awk '/VmRSS/ {print $2}' /proc/$DAEMON/status)
	(
		for r in $(seq 100); do
			for k in $(seq 20); do "$WORK/churn/c$k"; done
		done
		touch "$WORK/churn.done"
	) &
	CHURN=$!
	maxp=0 maxo=0 maxu=0 maxfd=0 n=0
	while [ ! -e "$WORK/churn.done" ] || [ $n -lt 3 ]; do
		scrape churn 1
		n=$((n + 1))
		p=$(metric profd_processes_tracked)
		o=$(metric profd_symbolizer_cache_objects)
		u=$(metric profd_unwind_cache_objects)
		f=$(ls /proc/$DAEMON/fd | wc -l)
		[ "$u" -gt $maxu ] && maxu=$u
		[ "$p" -gt $maxp ] && maxp=$p
		[ "$o" -gt $maxo ] && maxo=$o
		[ "$f" -gt $maxfd ] && maxfd=$f
	done
	wait $CHURN
	# Exited processes go once no profile that began before their exit runs
	# (the bound alone would keep 300 of them).
	scrape churn 1
	ex=$(metric profd_processes_exited)
	[ "$ex" -lt 50 ] || fail "$ex exited processes still tracked after the churn"
	rss1=$(awk '/VmRSS/ {print $2}' /proc/$DAEMON/status)
	fds1=$(ls /proc/$DAEMON/fd | wc -l)
	echo "churn: $n scrapes; processes tracked max $maxp, objects max $maxo (unwinder's $maxu);" \
		"fds $fds0 -> $fds1 (max $maxfd); RSS $rss0 -> $rss1 KiB; $ex exited still tracked"
	[ "$maxp" -le 300 ] || fail "processes tracked reached $maxp (limit 300)"
	[ "$maxo" -le 48 ] || fail "symbolizer objects reached $maxo (limit 48)"
	[ "$maxu" -le 48 ] || fail "the unwinder's cache reached $maxu objects (limit 48)"
	[ "$(metric profd_processes_limit)" = 300 ] || fail "/metrics does not show the process limit"
	[ "$(metric profd_symbolizer_cache_objects_limit)" = 48 ] ||
		fail "/metrics does not show the object limit"
	# Each cached object holds at most 3 fds (its file, libdw's, a debug
	# file), in each of the two caches (the builder's and the unwinder's).
	[ "$maxfd" -le $((fds0 + 2 * 3 * 48 + 16)) ] || fail "fds went from $fds0 to $maxfd"
	pass "2,000 short-lived processes of 20 binaries: tables and fds within their bounds"
fi

if want bombs; then
	# add_section FILE NAME TYPE SIZE: a section header for NAME (a new
	# section name table holds it) whose SIZE bytes lie past the file's
	# end, in a hole: the file claims them and holds none.
	add_section() {
		python3 - "$@" <<'PY'
import os, struct, sys
path, name, typ, size = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3]), int(sys.argv[4])
b = bytearray(open(path, "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
shdrs = [bytearray(b[shoff + i * shentsize:shoff + (i + 1) * shentsize]) for i in range(shnum)]
# The old names, then the new one, in a new name table at the end.
stro, strs = struct.unpack_from("<QQ", shdrs[shstrndx], 0x18)
names = bytes(b[stro:stro + strs]) + name + b"\0"
noff = len(b)
b += names
struct.pack_into("<QQ", shdrs[shstrndx], 0x18, noff, len(names))
data = (len(b) + 0xfff) & ~0xfff
new = bytearray(shentsize)
struct.pack_into("<IIQQQQIIQQ", new, 0, len(names) - len(name) - 1, typ, 0, 0,
                 data, size, 0, 0, 1, 0)
shdrs.append(new)
# The header table after the claimed bytes, so that they lie inside the file.
table = data + size
struct.pack_into("<Q", b, 0x28, table)
struct.pack_into("<H", b, 0x3c, shnum + 1)
with open(path, "wb") as f:
    f.write(b)
    f.seek(table)
    for h in shdrs:
        f.write(h)
PY
	}
	mkdir -p "$WORK/bombs"
	chmod 0755 "$WORK/bombs"
	cc -O1 -g -DFN=spin_strtab -o "$WORK/bombs/strtab_bomb" "$WORK/spin.c"
	cc -O1 -g -DFN=spin_dwarf -o "$WORK/bombs/dwarf_bomb" "$WORK/spin.c"
	add_section "$WORK/bombs/strtab_bomb" .strtab.big 3 $((600 << 20))	# SHT_STRTAB
	add_section "$WORK/bombs/dwarf_bomb" .debug_big 1 $((600 << 20))	# SHT_PROGBITS
	# A debug file of a user's own, beside its binary (.gnu_debuglink, the
	# same build ID), whose .debug_info is a real zlib stream that inflates
	# to 600 MiB of zeros: 600 KB on disk.  libdw inflates every section
	# when it opens a debug file; the copy on disk (--scratch-dir) is held
	# to 64 MiB for another user's file, and so is the one in memory.
	cc -O1 -g -Wl,--build-id -DFN=spin_debugfile -o "$WORK/bombs/debug_bomb" "$WORK/spin.c"
	objcopy --only-keep-debug --compress-debug-sections=zlib "$WORK/bombs/debug_bomb" \
		"$WORK/bombs/debug_bomb.debug"
	objcopy --strip-debug --add-gnu-debuglink="$WORK/bombs/debug_bomb.debug" "$WORK/bombs/debug_bomb"
	python3 - "$WORK/bombs/debug_bomb.debug" $((600 << 20)) <<'PY'
import struct, sys, zlib
path, size = sys.argv[1], int(sys.argv[2])
b = bytearray(open(path, "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
stro, = struct.unpack_from("<Q", b, shoff + shstrndx * shentsize + 0x18)
z, chunk, stream = zlib.compressobj(9), bytes(1 << 20), bytearray()
for _ in range(size >> 20):
    stream += z.compress(chunk)
stream += z.flush()
for i in range(shnum):
    h = shoff + i * shentsize
    name, = struct.unpack_from("<I", b, h)
    if b[stro + name:stro + name + 12] != b".debug_info\0":
        continue
    off = (len(b) + 7) & ~7
    b += bytes(off - len(b)) + struct.pack("<IIQQ", 1, 0, size, 1) + stream
    struct.pack_into("<QQQ", b, h + 8, 0x800, 0, off)  # SHF_COMPRESSED, addr, offset
    struct.pack_into("<Q", b, h + 0x20, 24 + len(stream))
    break
else:
    sys.exit("no .debug_info")
open(path, "wb").write(b)
PY
	# Another user's files: read, not mapped, so what they claim is what
	# libelf would read.  On disk they hold a few KB.
	chown nobody "$WORK/bombs/strtab_bomb" "$WORK/bombs/dwarf_bomb" "$WORK/bombs/debug_bomb" \
		"$WORK/bombs/debug_bomb.debug"
	[ "$(du -k "$WORK/bombs/strtab_bomb" | cut -f1)" -lt 1024 ] || fail "the bomb is not sparse"
	refused0=$(metric profd_symbolizer_objects_refused_total)
	run_spin "$WORK/bombs/strtab_bomb"
	S1=$SPIN
	run_spin "$WORK/bombs/dwarf_bomb"
	S2=$SPIN
	run_spin "$WORK/bombs/debug_bomb"
	S3=$SPIN
	health_watch
	scrape bombs 3
	health_unwatch "bombs" 5000
	kill "$S1" "$S2" "$S3" 2>/dev/null || true
	hwm=$(awk '/VmHWM/ {print $2}' /proc/$DAEMON/status)
	echo "bombs: the daemon's peak RSS $((hwm >> 10)) MiB"
	# ASan's shadow memory and quarantine come on top (381 MiB seen); the
	# unbounded read is 1.2 GB without it.
	max_mb=256
	[ -n "${SANITIZE:-}" ] && max_mb=768
	[ "$hwm" -lt $((max_mb << 10)) ] || fail "bombs: the daemon's peak RSS reached $((hwm >> 10)) MiB"
	refused=$(metric profd_symbolizer_objects_refused_total)
	[ $((refused - refused0)) -ge 2 ] || fail "bombs: profd_symbolizer_objects_refused_total went from $refused0 to $refused"
	grep -q "strtab_bomb: its symbol tables and notes would take 600 MiB in memory" "$WORK/serve.err" ||
		fail "bombs: no log line names the refused file"
	# (Unless memory pressure already has every profile symbolized without
	# DWARF, as under ASan, whose own overhead passes max_memory_mb.)
	grep -q "dwarf_bomb: its DWARF would take 600 MiB in memory" "$WORK/serve.err" ||
		grep -q "symbolizing without DWARF" "$WORK/serve.err" ||
		fail "bombs: no log line names the file symbolized without DWARF"
	# Refused: its samples are there, unnamed.  Without DWARF: named from
	# the symbol table.
	samples_of "$WORK/bombs.pb.gz" "$S1" | awk '$2 >= 10 {ok=1} END {exit !ok}' ||
		fail "bombs: too few samples of the refused program"
	expect_leaf bombs "$S2" spin_dwarf spin_strtab
	grep -m1 "debug_bomb: its debug file" "$WORK/serve.err" || true
	grep -q "debug_bomb: its debug file's DWARF would take 600 MiB, over 64" "$WORK/serve.err" ||
		grep -q "symbolizing without DWARF" "$WORK/serve.err" ||
		fail "bombs: no log line names the debug file left unused"
	expect_leaf bombs "$S3" spin_debugfile spin_dwarf
	scratch=$(metric profd_symbolizer_scratch_bytes)
	[ "${scratch:-0}" -le $((64 << 20)) ] || fail "bombs: $scratch bytes of inflated copies on disk"
	pass "files claiming 600 MiB string tables or DWARF, and a debug file inflating to 600 MiB: refused or symbolized without DWARF, peak RSS $((hwm >> 10)) MiB, $((${scratch:-0} >> 20)) MiB of copies on disk"
fi

if want spoof; then
	# Named postgres, its title a client backend's, and not postgres: a
	# user's file.  Its samples must carry no backend_type, user or database.
	cat >"$WORK/spoof.c" <<'EOF'
#include <string.h>
#include <sys/prctl.h>
int main(int argc, char **argv)
{
	static const char t[] = "postgres: mallory payments [local] idle";

	(void)argc;
	prctl(PR_SET_NAME, "postgres");
	/* argv[0] was exec'd long enough to take the title, as postgres does. */
	memset(argv[0], 0, strlen(argv[0]));
	memcpy(argv[0], t, sizeof(t) - 1);
	/* Others read it (/proc/PID/cmdline): not dead stores. */
	__asm__ volatile("" : : "r"(argv[0]) : "memory");
	for (volatile unsigned long x = 0;; x++)
		;
}
EOF
	mkdir -p "$WORK/mallory"
	chmod 0755 "$WORK/mallory"
	cc -O1 -o "$WORK/mallory/postgres" "$WORK/spoof.c"
	chown nobody "$WORK/mallory/postgres"
	# bash -c execs in place, so $! is the look-alike itself (a "( exec
	# ... ) &" is a subshell in a subshell, and killing $! left it running).
	bash -c 'exec -a "$0" "$1"' "$(printf '%060d' 0)" "$WORK/mallory/postgres" &
	SPOOF=$!
	PIDS_TO_KILL+=("$SPOOF")
	await_title "$SPOOF" "postgres: mallory payments [local] idle" spoof
	before=$(metric profd_process_titles_not_postgres_total)
	code=$(curl -sS -m 60 -o "$WORK/spoof.pb.gz" -w '%{http_code}' \
		"$BASE/debug/pprof/profile?seconds=3&frequency=199&labels=default,pid")
	[ "$code" = 200 ] || fail "spoof: scrape answered $code"
	kill "$SPOOF" 2>/dev/null || true
	python3 - "$WORK/spoof.pb.gz" "$SPOOF" <<'PY' || fail "spoof: a user's program got postgres labels"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
mine = [s for s in p.samples if s["labels"].get("pid") == sys.argv[2]]
assert sum(s["values"][0] for s in mine) >= 10, f"only {len(mine)} samples of the look-alike"
bad = [s["labels"] for s in mine if {"backend_type", "user", "database"} & set(s["labels"])]
assert not bad, bad[:3]
print(f"spoof: {sum(s['values'][0] for s in mine)} samples of the look-alike, none with postgres labels")
PY
	[ "$(metric profd_process_titles_not_postgres_total)" -gt "${before:-0}" ] ||
		fail "spoof: profd_process_titles_not_postgres_total did not move"
	pass "a user's program named postgres with a backend's title: no backend_type, user or database"
fi

if want links; then
	# Debug links a file's owner chose (issue #25, items 4 and 5).
	# samples_leaf NAME PID: the most common leaf of pid's samples.
	samples_leaf() { samples_of "$WORK/$1.pb.gz" "$2" | sed -n '1s/ .*//p'; }
	L=$WORK/links
	mkdir -p "$L" "$WORK/jail/bin"
	chmod 0755 "$WORK" "$L" "$WORK/jail" "$WORK/jail/bin"
	# A stripped program whose .gnu_debuglink names x.debug, a symlink to
	# a file with its symbols (the same build ID) that only root may read.
	cc -O1 -g -DFN=spin_secret -o "$L/orig" "$WORK/spin.c"
	objcopy --strip-all "$L/orig" "$L/prog"
	cp "$L/orig" "$L/x.debug"
	objcopy --add-gnu-debuglink="$L/x.debug" "$L/prog"
	cp "$L/orig" "$L/secret.elf"
	chmod 0600 "$L/secret.elf"
	ln -sf "$L/secret.elf" "$L/x.debug"
	chmod 0755 "$L/prog"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$L/prog" &
	SECRET=$!
	PIDS_TO_KILL+=("$SECRET")
	# The same, through a chroot: /bin/x's link is an absolute symlink to a
	# host file anyone may read, which the process could never open.
	cc -static -O1 -g -DFN=spin_jail -o "$L/jail_orig" "$WORK/spin.c"
	objcopy --strip-all "$L/jail_orig" "$WORK/jail/bin/x"
	cp "$L/jail_orig" "$WORK/jail/bin/x.debug"
	objcopy --add-gnu-debuglink="$WORK/jail/bin/x.debug" "$WORK/jail/bin/x"
	cp "$L/jail_orig" "$L/host.elf"
	chmod 0644 "$L/host.elf"
	ln -sf "$L/host.elf" "$WORK/jail/bin/x.debug"
	chroot "$WORK/jail" /bin/x &
	JAILED=$!
	PIDS_TO_KILL+=("$JAILED")
	sleep 0.3
	scrape links 3
	kill "$SECRET" "$JAILED" 2>/dev/null || true
	leaf=$(samples_leaf links "$SECRET")
	echo "links: nobody's stripped program, its link to a root-only file: leaf $leaf"
	[ -n "$leaf" ] && [ "$leaf" != spin_secret ] ||
		fail "links: a user's profile read symbols from a file only root may read ($leaf)"
	leaf=$(samples_leaf links "$JAILED")
	echo "links: a chroot's link to a host path: leaf $leaf"
	[ -n "$leaf" ] && [ "$leaf" != spin_jail ] ||
		fail "links: a chroot's debug link reached a host file ($leaf)"
	# The control: a debug file its owner may read is used (by a copy of
	# the program, which the symbol cache has not seen).
	chmod 0644 "$L/secret.elf"
	cp "$L/prog" "$L/prog2"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$L/prog2" &
	SECRET=$!
	PIDS_TO_KILL+=("$SECRET")
	sleep 0.3
	scrape links2 3
	kill "$SECRET" 2>/dev/null || true
	leaf=$(samples_leaf links2 "$SECRET")
	[ "$leaf" = spin_secret ] || fail "links: a debug file the process's owner may read was not used ($leaf)"
	pass "debug links: a root-only target and a chroot's host path lend no symbols; a readable one does"
fi

# Bounds are checked like every config key.
echo '{"max_objects": 0}' >"$WORK/bad.json"
if "$PROFD" serve --listen 127.0.0.1:1 --config "$WORK/bad.json" 2>"$WORK/bad.err"; then
	fail "max_objects 0 was accepted"
fi
grep -q '"max_objects" must be an integer' "$WORK/bad.err" || fail "bad bound: $(cat "$WORK/bad.err")"

call h GET /health
expect_code h 200 "/health at the end"
kill -0 $DAEMON || fail "the daemon is gone"
