#!/bin/bash
# Sessions are independent: a POST /profile/cpu taken while a 10 s scrape of
# /debug/pprof/profile runs gets its own complete profile, and the scrape
# keeps its own.  Both count about seconds x frequency samples of a
# workload that keeps exactly one CPU busy (checked against the CPU time it
# really got, so a loaded machine doesn't make the test lie).
. "$(dirname "$0")/lib/common.sh"
need_root
for tool in curl go python3; do
	command -v $tool >/dev/null || { echo "skip: no $tool (make test-deps)"; exit 77; }
done
export PPROF_TMPDIR=$WORK

# serve PORT ARGS...: start the daemon; return once /health answers.
serve() {
	local port=$1
	shift
	"$PROFD" serve --listen 127.0.0.1:"$port" "$@" 2>"$WORK/serve.err" &
	SERVE_PID=$!
	PIDS_TO_KILL+=("$SERVE_PID")
	BASE=http://127.0.0.1:$port
	for _ in $(seq 150); do
		curl -sf -m 1 -o /dev/null "$BASE/health" && return 0
		kill -0 "$SERVE_PID" 2>/dev/null || { cat "$WORK/serve.err" >&2; fail "profd serve died"; }
		sleep 0.1
	done
	fail "profd serve did not answer /health in 15 s"
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
	CODE=$(curl -s -m 90 -X "$method" -D "$WORK/$name.hdr" -o "$WORK/$name.body" \
		-w '%{http_code}' "$@" "$BASE$path")
}
body() { cat "$WORK/$1.body"; }
header() { grep -i "^$2:" "$WORK/$1.hdr" | head -1 | cut -d: -f2- | tr -d '\r' | sed 's/^ *//'; }
expect_code() { # NAME WANT WHAT
	[ "$CODE" = "$2" ] || fail "$3: status $CODE, want $2; body: $(head -c 300 "$WORK/$1.body")"
}
expect_body() { # NAME EXACT WHAT
	[ "$(body "$1")" = "$2" ] || fail "$3: body '$(head -c 300 "$WORK/$1.body")', want '$2'"
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

# CPU time (seconds, 2 decimals) the burner has used so far.
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }
# within ACTUAL EXPECTED PERCENT
within() { awk -v a="$1" -v e="$2" -v p="$3" 'BEGIN {exit !(a >= e * (1 - p / 100) && a <= e * (1 + p / 100))}'; }
samples_of() {
	python3 -c 'import sys, pprof_raw; print(pprof_raw.load(sys.argv[1]).total())' "$1" ||
		fail "go tool pprof cannot read $1"
}

"$BUILD/tests/inline_target" 120 >/dev/null &
BURN=$!
PIDS_TO_KILL+=("$BURN")
serve "$(free_port 17160)" --pid "$BURN"
FREQ=99

c0=$(cpu_of "$BURN")
curl -s -m 60 -D "$WORK/scrape.hdr" -o "$WORK/scrape.pb.gz" \
	"$BASE/debug/pprof/profile?seconds=10&frequency=$FREQ" &
SCRAPE=$!
sleep 2
c1=$(cpu_of "$BURN")
code=$(curl -s -m 60 -o "$WORK/post.pb" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d "{\"profiler\": {\"BccProfile\": null}, \"sampling_frequency\": $FREQ, \"timeout_seconds\": 5, \"targets\": {\"pids\": [$BURN]}}" \
	"$BASE/profile/cpu")
c2=$(cpu_of "$BURN")
wait $SCRAPE || fail "the scrape failed (curl $?)"
c3=$(cpu_of "$BURN")
[ "$code" = 200 ] || fail "the POST taken during the scrape got $code"
head -1 "$WORK/scrape.hdr" | grep -q ' 200' || fail "the scrape got $(head -1 "$WORK/scrape.hdr")"

ns=$(samples_of "$WORK/scrape.pb.gz")
np=$(samples_of "$WORK/post.pb")
cpu_scrape=$(awk -v a="$c0" -v b="$c3" 'BEGIN {print b - a}')
cpu_post=$(awk -v a="$c1" -v b="$c2" 'BEGIN {print b - a}')
exp_scrape=$(awk -v c="$cpu_scrape" -v f=$FREQ 'BEGIN {printf "%d", c * f}')
exp_post=$(awk -v c="$cpu_post" -v f=$FREQ 'BEGIN {printf "%d", c * f}')
echo "scrape: $ns samples, burner used ${cpu_scrape} s CPU -> expect $exp_scrape (nominal $((10 * FREQ)))"
echo "post:   $np samples, burner used ${cpu_post} s CPU -> expect $exp_post (nominal $((5 * FREQ)))"
# The burner must really have kept a CPU busy, or "1 busy CPU" is not true.
within "$cpu_scrape" 10 20 || {
	echo "skip: the burner got ${cpu_scrape} s of CPU in 10 s: the machine is too busy"
	exit 77
}
within "$ns" "$exp_scrape" 20 || fail "scrape: $ns samples, expected $exp_scrape +-20%"
within "$np" "$exp_post" 20 || fail "post: $np samples, expected $exp_post +-20%"
pass "concurrent scrape ($ns samples) and POST ($np samples) both complete and within 20%"

call metrics GET /metrics
grep -q '^profd_sessions_running 0$' "$WORK/metrics.body" || fail "sessions still running after both"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "profd serve exited $? on SIGTERM"
