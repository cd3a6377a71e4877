#!/bin/bash
# Debug files from debuginfod servers (DEBUGINFOD_URLS), never waited for:
#  1. a stripped program's functions get their real names, and file:line,
#     from a debug file that only a local `debuginfod` serves;
#  2. with a server that accepts connections and never answers, `record`
#     still ends on time, exits 0 and writes a profile;
#  3. with that server, `serve` answers /health while a profile is built
#     and the fetch hangs, and gives the fetch up after DEBUGINFOD_MAXTIME;
#  4. libdebuginfod is loaded only then: a daemon without DEBUGINFOD_URLS
#     maps neither it nor libcurl (the always-on daemon's RSS).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"
for tool in cc objcopy strip readelf debuginfod debuginfod-find; do
	command -v $tool >/dev/null || { echo "skip: no $tool (make test-deps)"; exit 77; }
done
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH DEBUGINFOD_MAXTIME DEBUGINFOD_TIMEOUT

# --- a CPU-bound program, built with -g, then split: the debug file goes
# to the server's directory, the program keeps only its build ID note.
cat >"$WORK/prog.c" <<'EOF'
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t dbgd_leaf(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) static void dbgd_burn(double secs)
{
	double end = now() + secs;
	uint64_t x = 1;

	while (now() < end)
		x = dbgd_leaf(x);
	sink = x;
}

int main(int argc, char **argv)
{
	dbgd_burn(argc > 1 ? atof(argv[1]) : 10);
	return 0;
}
EOF
mkdir -p "$WORK/srv"
cc -g -O2 -o "$WORK/prog" "$WORK/prog.c"
objcopy --only-keep-debug "$WORK/prog" "$WORK/srv/prog.debug"
strip --strip-all "$WORK/prog"
BUILD_ID=$(readelf -n "$WORK/prog" | awk '/Build ID/ {print $3}')
[ -n "$BUILD_ID" ] || fail "the stripped program has no build ID"
! readelf -S "$WORK/prog" | grep -Eq '\.symtab|\.debug_' ||
	fail "strip left symbols or DWARF in the program"
[ ! -e "/usr/lib/debug/.build-id/${BUILD_ID:0:2}/${BUILD_ID:2}.debug" ] ||
	fail "a local debug file for $BUILD_ID exists: the test would not need debuginfod"
pass "stripped program, build ID $BUILD_ID, debug file only in $WORK/srv"

# burn SECONDS: start the program; sets PROG.
burn() {
	"$WORK/prog" "$1" &
	PROG=$!
	PIDS_TO_KILL+=("$PROG")
}

# --- 1. a local debuginfod serving the debug file
DPORT=$(free_port 17400)
debuginfod -F "$WORK/srv" -p "$DPORT" -d "$WORK/debuginfod.sqlite" -t 0 -g 0 \
	>"$WORK/debuginfod.log" 2>&1 &
PIDS_TO_KILL+=("$!")
# Ready once it has scanned the directory: a client of its own gets the
# file.  A fresh cache each try (libdebuginfod remembers a miss for 10
# minutes), and none of them profd's, so its fetch really goes over HTTP.
ready=""
for i in $(seq 100); do
	if DEBUGINFOD_URLS=http://127.0.0.1:$DPORT DEBUGINFOD_CACHE_PATH=$WORK/probe-cache.$i \
		debuginfod-find debuginfo "$BUILD_ID" >/dev/null 2>&1; then
		ready=1
		break
	fi
	sleep 0.2
done
[ -n "$ready" ] || { tail "$WORK/debuginfod.log" >&2; fail "debuginfod did not serve $BUILD_ID in 20 s"; }

export DEBUGINFOD_URLS=http://127.0.0.1:$DPORT DEBUGINFOD_CACHE_PATH=$WORK/cache
burn 8
"$PROFD" record --pid "$PROG" --seconds 3 --format folded -o "$WORK/fetched.folded" \
	2>"$WORK/record1.err" || { cat "$WORK/record1.err" >&2; fail "profd record failed"; }
[ -s "$DEBUGINFOD_CACHE_PATH/$BUILD_ID/debuginfo" ] ||
	fail "profd did not fetch the debug file into DEBUGINFOD_CACHE_PATH"
# Every sample of the program's loop names it, and no frame of the program
# is a bare prog+0x... any more.
python3 - "$WORK/fetched.folded" <<'PY' || fail "names from the fetched debug file: see above"
import sys
total = named = 0
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    frames, n = stack.split(";"), int(n)
    if frames[0] != "prog":
        continue
    total += n
    if "main;dbgd_burn;dbgd_leaf" in stack and not any(f.startswith("prog+0x") for f in frames):
        named += n
assert total >= 30, f"only {total} samples of prog"
assert named >= 0.9 * total, f"{named} of {total} samples have main;dbgd_burn;dbgd_leaf"
print(f"ok: {named}/{total} samples of the stripped program read main;dbgd_burn;dbgd_leaf")
PY
wait "$PROG" 2>/dev/null || true

# Fetched already: the next run opens it straight from the cache, with
# DWARF's file and line for the leaf.
burn 6
"$PROFD" record --pid "$PROG" --seconds 2 -o "$WORK/cached.pb.gz" 2>"$WORK/record2.err" ||
	{ cat "$WORK/record2.err" >&2; fail "profd record (cached) failed"; }
python3 - "$WORK/cached.pb.gz" <<'PY' || fail "file:line from the fetched DWARF: see above"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
lines = {l for loc in p.locations.values() for l in loc["lines"] if l[0] == "dbgd_leaf"}
assert lines, "no location of dbgd_leaf"
assert any(f.endswith("prog.c") and n > 0 for _, f, n in lines), f"no prog.c:line: {lines}"
print("ok: dbgd_leaf at", sorted(f"{f.rsplit('/', 1)[-1]}:{n}" for _, f, n in lines))
PY
wait "$PROG" 2>/dev/null || true

# --- a server that accepts connections and never answers them
HPORT=$(free_port 17420)
python3 - "$HPORT" "$WORK/hang.conns" <<'PY' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
held = []
while True:
    c, _ = s.accept()
    held.append(c)	# never read, never answered, never closed
    with open(sys.argv[2], "a") as f:
        f.write("connection\n")
PY
PIDS_TO_KILL+=("$!")
for _ in $(seq 50); do
	(exec 3<>/dev/tcp/127.0.0.1/"$HPORT") 2>/dev/null && break
	sleep 0.1
done
rm -f "$WORK/hang.conns"

# --- 2. record with the hanging server.  A fetch's own limit is 30 s by
# default (DEBUGINFOD_MAXTIME unset): ending in under 20 s means profd
# waited neither for the server nor for the limit, it cut the fetch off.
export DEBUGINFOD_URLS=http://127.0.0.1:$HPORT DEBUGINFOD_CACHE_PATH=$WORK/cache-hang
burn 30
start=$(date +%s%N)
rc=0
timeout 90 "$PROFD" record --pid "$PROG" --seconds 2 --format folded -o "$WORK/hang.folded" \
	2>"$WORK/record3.err" || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" -eq 0 ] || { cat "$WORK/record3.err" >&2; fail "profd record with a hanging server: exit $rc"; }
[ -s "$WORK/hang.conns" ] || fail "profd never asked the hanging server: nothing was tested"
[ "$ms" -lt 20000 ] || fail "profd record --seconds 2 took $ms ms with a hanging server"
prog_samples=$(awk '$1 ~ /^prog;/ {n += $NF} END {print n + 0}' "$WORK/hang.folded")
[ "$prog_samples" -ge 20 ] || fail "profile with a hanging server: $prog_samples samples of prog"
pass "record with a hanging debuginfod: exit 0 in $ms ms, $prog_samples samples of prog" \
	"(e.g. $(grep -o 'prog+0x[0-9a-f]*' "$WORK/hang.folded" | head -1))"

# --- 3. serve with the hanging server: the event loop never waits for it.
metric() { curl -s -m 5 "$BASE/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
rm -f "$WORK/hang.conns"
export DEBUGINFOD_MAXTIME=5 DEBUGINFOD_CACHE_PATH=$WORK/cache-serve
serve "$(free_port 17440)" --pid "$PROG"
curl -s -m 60 -o "$WORK/serve.folded" -w '%{http_code}' \
	"$BASE/debug/pprof/profile?seconds=4&format=folded" >"$WORK/serve.code" &
PROFILE_CURL=$!
for _ in $(seq 40); do
	[ -s "$WORK/hang.conns" ] && break
	sleep 0.1
done
[ -s "$WORK/hang.conns" ] || fail "serve never asked the hanging server"
# The worker is now stuck in a transfer that will not end on its own.
[ "$(metric profd_debuginfod_pending)" -ge 1 ] ||
	fail "no debuginfod fetch pending while the server hangs: $(curl -s "$BASE/metrics" | grep debuginfod)"
# A loop that waited for the fetch would answer only once it had ended
# (DEBUGINFOD_MAXTIME): /health answered while it still pends proves it
# does not, however slow a loaded machine makes the answer.
answered=0
for i in 1 2 3 4 5; do
	call health$i GET /health
	expect_code health$i 200 "/health while a fetch hangs"
	[ "$(metric profd_debuginfod_pending)" -ge 1 ] && answered=$((answered + 1))
	# Five tries fit in the fetch's 5 s on a quiet machine; a loaded one
	# may get fewer in, which proves as much once one was answered.
	if ! kill -0 "$PROFILE_CURL" 2>/dev/null; then
		[ "$answered" -ge 1 ] && break
		fail "the profile ended before /health was answered while the fetch hung"
	fi
	sleep 0.3
done
[ "$answered" -ge 1 ] || fail "/health was answered only after the hung fetch had ended"
pass "/health answered $i times while a profile was being built, $answered of them with the fetch still hanging"
wait "$PROFILE_CURL" || fail "the profile request failed"
[ "$(cat "$WORK/serve.code")" = 200 ] || fail "profile with a hanging server: status $(cat "$WORK/serve.code")"
prog_samples=$(awk '$1 ~ /^prog;/ {n += $NF} END {print n + 0}' "$WORK/serve.folded")
[ "$prog_samples" -ge 20 ] || fail "serve's profile: $prog_samples samples of prog"
# The time limit (DEBUGINFOD_MAXTIME=5) ends the fetch: it fails, none pend.
for _ in $(seq 100); do
	[ "$(metric profd_debuginfod_failed_total)" -ge 1 ] && [ "$(metric profd_debuginfod_pending)" = 0 ] &&
		break
	sleep 0.2
done
failed=$(metric profd_debuginfod_failed_total)
[ "$failed" -ge 1 ] && [ "$(metric profd_debuginfod_pending)" = 0 ] ||
	fail "the hung fetch was not given up: $(curl -s "$BASE/metrics" | grep '^profd_debuginfod')"
[ "$(metric profd_debuginfod_found_total)" = 0 ] || fail "found a debug file on a server that never answers"
call health GET /health
expect_code health 200 "/health after the fetch was given up"
pass "serve: profile of $prog_samples samples, hung fetch given up by the time limit" \
	"($(curl -s "$BASE/metrics" | awk '/^profd_debuginfod/ {printf "%s=%s ", $1, $2}'))"
# The dynamic build loaded libdebuginfod (and libcurl) for DEBUGINFOD_URLS
# (the static one has none to load)...
if readelf -d "$PROFD" | grep -q 'NEEDED.*libc\.so'; then
	grep -q libdebuginfod "/proc/$SERVE_PID/maps" || fail "serve with DEBUGINFOD_URLS has no libdebuginfod mapped"
fi
kill "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null || true

# --- 4. ...and a daemon without it maps neither.
unset DEBUGINFOD_URLS
serve "$(free_port 17445)"
libs=$(grep -c -e libdebuginfod -e libcurl "/proc/$SERVE_PID/maps" || true)
[ "$libs" = 0 ] || fail "serve without DEBUGINFOD_URLS maps libdebuginfod or libcurl: $(grep -e libdebuginfod -e libcurl "/proc/$SERVE_PID/maps" | head -3)"
pass "without DEBUGINFOD_URLS: no libdebuginfod or libcurl in the daemon ($(awk '/VmRSS/ {print $2, $3}' "/proc/$SERVE_PID/status") RSS)"
