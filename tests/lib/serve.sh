# Helpers for the tests that talk to `profd serve`.  Source it after
# common.sh: serve, free_port, call, body, header, expect_code, expect_body,
# is_gzip, pprof_check and health_probe.  Skips the test without root or the clients.
need_root
for tool in curl go python3; do
	command -v $tool >/dev/null || { echo "skip: no $tool (make test-deps)"; exit 77; }
done
export PPROF_TMPDIR=$WORK

# Whether the daemon SERVE_PID holds the listening socket of port $1: on a
# machine where other test runs start daemons, a free port can be taken
# between free_port and the bind, and /health would be another daemon's.
owns_port() {
	python3 - "$SERVE_PID" "$1" <<'PY'
import os, sys
pid, port = sys.argv[1], int(sys.argv[2])
socks = set()
for fd in os.listdir(f"/proc/{pid}/fd"):
    try:
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        continue
    if target.startswith("socket:["):
        socks.add(target[8:-1])
for line in open(f"/proc/{pid}/net/tcp").readlines()[1:]:
    f = line.split()
    if f[3] == "0A" and int(f[1].split(":")[1], 16) == port and f[9] in socks:
        sys.exit(0)
sys.exit(1)
PY
}

# serve PORT ARGS...: start the daemon; return once it listens and /health
# answers.
serve() {
	local port=$1
	shift
	"$PROFD" serve --listen 127.0.0.1:"$port" "$@" 2>"$WORK/serve.err" &
	SERVE_PID=$!
	PIDS_TO_KILL+=("$SERVE_PID")
	BASE=http://127.0.0.1:$port
	# 30 s, as start_record's (tests/lib/common.sh).
	for _ in $(seq 300); do
		curl -sf -m 1 -o /dev/null "$BASE/health" && owns_port "$port" && return 0
		kill -0 "$SERVE_PID" 2>/dev/null || { cat "$WORK/serve.err" >&2; fail "profd serve died"; }
		sleep 0.1
	done
	fail "profd serve did not answer /health in 30 s"
}

free_port() {
	for p in $(seq "$1" $(($1 + 100))); do
		(exec 3<>/dev/tcp/127.0.0.1/"$p") 2>/dev/null || { echo "$p"; return; }
	done
	fail "no free port near $1"
}

# call NAME METHOD PATH [CURL-ARGS...]: sets CODE; body in $WORK/NAME.body,
# headers in $WORK/NAME.hdr.
call() {
	local name=$1 method=$2 path=$3
	shift 3
	# A refused or cut connection is status 000 for expect_code to report
	# (with the daemon's log), not a silent exit of the test.
	CODE=$(curl -s -m 90 -X "$method" -D "$WORK/$name.hdr" -o "$WORK/$name.body" \
		-w '%{http_code}' "$@" "$BASE$path") || true
	touch "$WORK/$name.body" "$WORK/$name.hdr"
}
body() { cat "$WORK/$1.body"; }
metric() { curl -sf -m 10 "$BASE/metrics" | awk -v m="$1" '$1 == m { print $2 }'; } # NAME: its value now
# sessions_running N: wait (30 s at most) until N profiling sessions run, so
# that what a test does next happens inside the scrape it started in the
# background (a fixed sleep there was wall-clock luck on a loaded machine).
# (Its own query: some tests name their own metric().)
sessions_running() {
	local n=0
	for _ in $(seq 300); do
		n=$(curl -sf -m 10 "$BASE/metrics" | awk '$1 == "profd_sessions_running" { print $2 }')
		[ "${n:-0}" -ge "$1" ] && return 0
		sleep 0.1
	done
	fail "$1 profiling sessions did not start in 30 s (${n:-0} run)"
}
# heap_attached OUT TOTAL [preload]: wait (30 s at most) until the
# workload's output file OUT says ready, one process has heap probes and
# profd_heap_attach_total has reached TOTAL.  With "preload", until that one
# attachment is libprofd_heap.so's: a target that preloads it gets its libc
# probed at its exec (one attachment made; this daemon maps the same libc),
# then the preload's, made once for every process that maps it (a second
# one made, or not when an earlier target's is still there), and its libc
# probes go.
heap_attached() {
	for _ in $(seq 300); do
		grep -q ready "$1" && [ "$(metric profd_heap_attachments)" = 1 ] &&
			[ "$(metric profd_heap_attach_total)" -ge "$2" ] &&
			{ [ "${3-}" != preload ] || [ "$(metric profd_heap_preloads_probed)" = 1 ]; } &&
			return 0
		sleep 0.1
	done
	return 1
}
header() { grep -i "^$2:" "$WORK/$1.hdr" | head -1 | cut -d: -f2- | tr -d '\r' | sed 's/^ *//'; }
expect_code() { # NAME WANT WHAT
	[ "$CODE" = "$2" ] || fail "$3: status $CODE, want $2; body: $(head -c 300 "$WORK/$1.body")"
}
expect_body() { # NAME EXACT WHAT
	[ "$(body "$1")" = "$2" ] || fail "$3: body '$(head -c 300 "$WORK/$1.body")', want '$2'"
}
# The error form of the /debug/pprof/* routes, Go's net/http/pprof's: one
# line of text/plain with X-Go-Pprof: 1 (what the pprof tool prints).
expect_pprof_error() { # NAME WHAT
	[ "$(header "$1" X-Go-Pprof)" = 1 ] || fail "$2: no X-Go-Pprof: 1 header"
	[ "$(header "$1" Content-Type)" = "text/plain; charset=utf-8" ] ||
		fail "$2: Content-Type '$(header "$1" Content-Type)', want text/plain"
	[ "$(wc -l <"$WORK/$1.body")" = 1 ] && [ "$(head -c 1 "$WORK/$1.body")" != '{' ] ||
		fail "$2: the body is not one line of text: $(head -c 300 "$WORK/$1.body")"
}
is_gzip() { [ "$(head -c 2 "$1" | od -An -tx1 | tr -d ' \n')" = "1f8b" ]; }
# Samples in a profile and whether hot_a is in it, as go tool pprof reads it.
pprof_check() { # FILE WHAT
	local out
	out=$(python3 -c '
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
names = {f for s in p.samples for f in p.frames(s)}
print(p.total(), "hot_a" in names)' "$1") || fail "$2: go tool pprof cannot read it"
	set -- "$2" $out
	[ "$2" -gt 0 ] || fail "$1: no samples"
	[ "$3" = True ] || fail "$1: hot_a is not in the profile"
	echo "$2"
}

# health_probe FILE [INTERVAL]: in the background, one line per GET /health
# from a client of its own, "ms code" (code 0: no answer in 30 s), every
# INTERVAL seconds (0.1), until killed.  Sets PROBE.
health_probe() {
	python3 -u - "$BASE/health" "$1" "${2:-0.1}" <<'PY' &
import sys, time, urllib.request
url, out, every = sys.argv[1], open(sys.argv[2], "w", buffering=1), float(sys.argv[3])
while True:
    t = time.monotonic()
    try:
        code = urllib.request.urlopen(url, timeout=30).status
    except Exception:
        code = 0
    out.write(f"{(time.monotonic() - t) * 1000:.2f} {code}\n")
    time.sleep(every)
PY
	PROBE=$!
	PIDS_TO_KILL+=("$PROBE")
}
