#!/bin/bash
# Complete stacks, profd next to perf --call-graph dwarf, on the same
# workloads, one profiler after another while the workload runs, the order
# rotating from round to round:
#   nofp    build/tests/nofp_target (-fomit-frame-pointer: CFI only)
#   qsort   build/tests/qsort_target (time in a comparator under libc's qsort)
#   python  a python3 CPU loop (profd --exe python3.11)
#   pg_S    postgres under pgbench -S -c 2 (persistent connections)
#   pg_C    postgres under pgbench -C -S -c 2 (a new backend per transaction)
# Profilers, all at 99 Hz with the cpu-clock event:
#   profd      profd record --exe NAME --format folded
#   profd_all  profd record of the whole system (its daemon CPU)
#   perf8k     perf record --call-graph dwarf (8 KiB of stack a sample)
#   perf32k    perf record --call-graph dwarf,32768 (postgres only)
#   pprof      profd record --exe NAME in pprof, round 1 only: its comment
#              gives the bytes of user stack copied a sample
# Per profd run: the daemon's CPU while sampling (schedstat) and over its
# whole life (/usr/bin/time: loading, symbolizing, writing), and the
# profd_sample program's run_time_ns / run_cnt (kernel.bpf_stats_enabled).
# bench/stacks.py summarize turns the folded stacks into complete-stack
# shares and the share of profd's samples with a caller edge perf never
# records.  QUICK=1: one round of 1 s runs, and not every profiler on every
# workload.  Env: ROUNDS (3; 1 with QUICK), SECS (10; 1 with QUICK), PROFD
# (build/profd), OUT (build/bench/stacks; the figures go to $OUT.json).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${QUICK:-}" ]; then
	ROUNDS=${ROUNDS:-1} SECS=${SECS:-1}
else
	ROUNDS=${ROUNDS:-3} SECS=${SECS:-10}
fi
FREQ=99
OUT=${OUT:-build/bench/stacks}
export BUILD=$PWD/build TESTS=$PWD/tests
. tests/lib/common.sh
[ -x "$BUILD/tests/nofp_target" ] && [ -x "$BUILD/tests/qsort_target" ] ||
	fail "make build/tests/nofp_target build/tests/qsort_target first"
command -v perf >/dev/null || fail "needs perf (scripts/deps.sh --bench)"
. tests/lib/postgres.sh
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
WPIDS=()
stop_workload() {
	local p
	for p in "${WPIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${WPIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	WPIDS=()
}
trap 'stop_workload; sysctl -qw kernel.bpf_stats_enabled=$old_stats; stop_pg' EXIT
rm -rf "$OUT" && mkdir -p "$OUT"
RUNS=$OUT/runs.jsonl
: >"$RUNS"
# The interpreter itself, not a wrapper (pyenv's shims): its pid is the
# workload's, and the helpers start faster.
PY=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
# The executables: stacks.py reads their symbols (and their libraries') for
# names that share an address.
printf '%s\n' "$BUILD/tests/nofp_target" "$BUILD/tests/qsort_target" "$PY" $PGBIN/postgres >"$OUT/objects.txt"
PYCODE='import sys, time
end = time.time() + float(sys.argv[1])
while time.time() < end:
    sum(i * i for i in range(1000))'

sched_ns() { # PID: CPU time of all its threads, in ns
	{ cat /proc/$1/task/*/schedstat 2>/dev/null || true; } | awk '{s += $1} END {printf "%.0f\n", s}'
}
now_ns() { date +%s%N; }
bpf_stats() { # PID: run_time_ns run_cnt of its perf_event program (profd_sample, its only one)
	# (fds come and go while reading: cat skips the gone ones; each fdinfo starts with pos:)
	{ cat /proc/$1/fdinfo/* 2>/dev/null || true; } |
		awk '/^pos:/ {t = ""} /^prog_type:/ {t = $2} /^prog_id:/ {id = $2} /^run_time_ns:/ {ns = $2}
		     /^run_cnt:/ && t == 7 && !seen[id]++ {N += ns; C += $2}
		     END {printf "%.0f %.0f\n", N, C}'
}
perf_fds() { # PID: how many perf events it has open (0 before the sampler starts)
	ls -l /proc/$1/fd 2>/dev/null | grep -c 'perf_event' || true
}

# start_workload NAME DURATION: sets EXE (for --exe), COMM, PERF_TARGET
# (perf record's target) and PERF_FILTER (stacks.py perf-fold's).
start_workload() {
	local p
	case $1 in
	nofp | qsort)
		EXE=${1}_target
		"$BUILD/tests/$EXE" $2 >/dev/null &
		p=$!
		COMM=$EXE ;;
	python)
		"$PY" -c "$PYCODE" $2 &
		p=$!
		EXE=$(basename "$PY") COMM=$(basename "$PY" | cut -c1-15) ;;
	pg_S | pg_C)
		as_pg $PGBIN/pgbench -h "$WORK" -p $PGPORT -S $([ $1 = pg_C ] && echo -C) \
			-c 2 -j 2 -T $2 postgres >"$WORK/pgbench.out" 2>&1 &
		p=$!
		EXE=postgres COMM=postgres ;;
	esac
	WPIDS=($p)
	sleep 1
	# pgbench runs under runuser: stop pgbench itself first.
	[ "${1#pg_}" != "$1" ] && WPIDS=($(pgrep -P $p || true) $p)
	if [ "${1#pg_}" = "$1" ]; then
		PERF_TARGET="-p $p" PERF_FILTER="--pid $p"
	else
		# Backends come and go (-C): the whole system, postgres's stacks only.
		PERF_TARGET="-a" PERF_FILTER="--comm postgres"
	fi
	kill -0 $p 2>/dev/null || { cat "$WORK/pgbench.out" 2>/dev/null || true; fail "workload $1 did not start"; }
}

emit() { echo "$1" >>"$RUNS"; }

# run_profd WORKLOAD VARIANT ROUND FILE ARGS...: one profd record, with its
# costs over the window from its "profiling" line (set-up done) to just
# before --seconds after its perf events opened (its session's end).
run_profd() {
	local w=$1 v=$2 r=$3 f=$4 t p= t0 ts= c0 c1 w0 w1 b0 bc0 b1 bc1 wall us ss i left
	shift 4
	t0=$(now_ns)
	/usr/bin/time -f "%e %U %S" -o "$WORK/time" \
		"$PROFD" record "$@" --seconds $SECS --frequency $FREQ -o "$OUT/$f" 2>"$WORK/prof.err" &
	t=$!
	for i in $(seq 600); do
		[ -n "$p" ] || p=$(pgrep -P $t || true)
		[ -z "$ts" ] && [ -n "$p" ] && [ "$(perf_fds $p)" -gt 0 ] && ts=$(now_ns)
		grep -q "profiling" "$WORK/prof.err" 2>/dev/null && break
		kill -0 $t 2>/dev/null || break
		sleep 0.05
	done
	c0= c1= w0=0 w1=0 b0=0 bc0=0 b1=0 bc1=0
	if grep -q "profiling" "$WORK/prof.err" && [ -n "$p" ]; then
		c0=$(sched_ns $p) w0=$(now_ns)
		read -r b0 bc0 < <(bpf_stats $p)
		: "${ts:=$w0}"
		left=$(( ts + (SECS * 1000 - 400) * 1000000 - $(now_ns) ))
		if [ $left -gt 300000000 ]; then
			sleep "$(awk "BEGIN {print $left / 1e9}")"
			c1=$(sched_ns $p) w1=$(now_ns)
			read -r b1 bc1 < <(bpf_stats $p)
			# Gone already: no window.
			[ "$c1" -gt 0 ] || c1=
		fi
	fi
	# It should stop on its own right after SECS: give it 60 s more.
	for i in $(seq 600); do kill -0 $t 2>/dev/null || break; sleep 0.1; done
	if kill -0 $t 2>/dev/null; then
		echo "$w $v round $r: profd still running 60 s after --seconds $SECS; killed:" >&2
		tail -5 "$WORK/prof.err" >&2
		[ -n "$p" ] && kill -KILL $p 2>/dev/null || true
		wait $t || true
		emit "{\"workload\": \"$w\", \"variant\": \"$v\", \"round\": $r, \"error\": \"hang\"}"
		return
	fi
	if ! wait $t; then
		echo "$w $v round $r: profd failed: $*" >&2
		cat "$WORK/prof.err" "$WORK/time" >&2
		emit "{\"workload\": \"$w\", \"variant\": \"$v\", \"round\": $r, \"error\": \"exit\"}"
		return
	fi
	read -r wall us ss < <(tail -1 "$WORK/time")
	local extra=""
	if [ -n "$c1" ]; then
		extra=", \"cpu_ns\": $((c1 - c0)), \"wall_ns\": $((w1 - w0)), \"bpf_ns\": $((b1 - b0)), \"bpf_cnt\": $((bc1 - bc0))"
	fi
	[ -n "$ts" ] && extra="$extra, \"startup_s\": $(awk "BEGIN {print ($w0 - $t0) / 1e9}"), \"setup_after_sampling_s\": $(awk "BEGIN {print ($w0 - $ts) / 1e9}")"
	[ $v = pprof ] && extra="$extra, \"copied\": $("$PY" bench/stacks.py copied "$OUT/$f")"
	extra="$extra, \"comm\": \"$COMM\""
	[ $v = pprof ] || extra="$extra, \"folded\": \"$f\""
	emit "{\"workload\": \"$w\", \"variant\": \"$v\", \"round\": $r, \"seconds\": $SECS, \"total_cpu_s\": $(awk "BEGIN {print $us + $ss}"), \"wall_s\": $wall$extra}"
	local cost="no window to measure costs in (startup too long for --seconds $SECS)"
	[ -n "$c1" ] && cost="daemon $(( (c1 - c0) / 1000000 )) ms CPU over $(( (w1 - w0) / 1000000 )) ms,"\
" $(( (b1 - b0) / (bc1 - bc0 > 0 ? bc1 - bc0 : 1) )) ns/sample BPF"
	echo "$w $v round $r: $(grep -o '[0-9]* samples in.*' "$WORK/prof.err" | head -1), $cost" >&2
}

# run_perf WORKLOAD VARIANT ROUND SIZE: perf record; perf script comes later.
run_perf() {
	local w=$1 v=$2 r=$3 size=$4
	# shellcheck disable=SC2086
	/usr/bin/time -f "%U %S" -o "$WORK/time" \
		perf record -e cpu-clock -F $FREQ --call-graph dwarf${size:+,$size} $PERF_TARGET \
		-o "$WORK/$w.r$r.$v.data" -- sleep $SECS >"$WORK/perf.err" 2>&1 ||
		{ cat "$WORK/perf.err" >&2; fail "perf record failed"; }
	PENDING+=("$w $v $r ${size:-8192} $(awk '{print $1 + $2}' "$WORK/time") $PERF_FILTER")
	echo "$w $v round $r: $(grep -o '([0-9]* samples)' "$WORK/perf.err")" >&2
}

# After the workload: perf script, folded by stacks.py (perf's unwinding
# and symbolizing is the slow part; it should not take the workload's CPU).
fold_pending() {
	local item w v r size cpu filt
	for item in "${PENDING[@]}"; do
		read -r w v r size cpu filt <<<"$item"
		/usr/bin/time -f "%U %S" -o "$WORK/time" \
			perf script -i "$WORK/$w.r$r.$v.data" -F comm,pid,ip,sym,dso 2>/dev/null >"$WORK/script.txt"
		"$PY" bench/stacks.py perf-fold $filt <"$WORK/script.txt" >"$OUT/$w.r$r.$v.folded"
		rm -f "$WORK/$w.r$r.$v.data" "$WORK/script.txt"
		emit "{\"workload\": \"$w\", \"variant\": \"$v\", \"round\": $r, \"seconds\": $SECS, \"stack_size\": $size,"\
" \"record_cpu_s\": $cpu, \"script_cpu_s\": $(awk '{print $1 + $2}' "$WORK/time"), \"folded\": \"$w.r$r.$v.folded\"}"
	done
	PENDING=()
}

WORKLOADS=(${WORKLOADS:-nofp qsort python pg_S pg_C})
for r in $(seq $ROUNDS); do
	for w in "${WORKLOADS[@]}"; do
		vs=(profd profd_all perf8k)
		[ "${w#pg_}" != "$w" ] && vs+=(perf32k)
		# Rotate the order each round.
		k=$(( (r - 1) % ${#vs[@]} ))
		vs=("${vs[@]:k}" "${vs[@]:0:k}")
		[ $r = 1 ] && vs+=(pprof)
		# QUICK: a smoke test, each workload and each kind of run once.
		if [ -n "${QUICK:-}" ]; then
			case $w in
			nofp) vs=(profd profd_all perf8k pprof) ;;
			pg_C) vs=(profd perf8k perf32k) ;;
			*) vs=(profd perf8k) ;;
			esac
		fi
		start_workload $w $(( (${#vs[@]} + 1) * (SECS + 8) + 10 ))
		PENDING=()
		for v in "${vs[@]}"; do
			case $v in
			profd) run_profd $w $v $r $w.r$r.$v.folded --exe $EXE --format folded ;;
			profd_all) run_profd $w $v $r $w.r$r.$v.folded --format folded ;;
			pprof) run_profd $w $v $r $w.r$r.pb.gz --exe $EXE ;;
			perf8k) run_perf $w $v $r "" ;;
			perf32k) run_perf $w $v $r 32768 ;;
			esac
		done
		stop_workload
		fold_pending
	done
done
"$PY" bench/stacks.py summarize "$OUT" >"$OUT.json"
echo "wrote $OUT.json" >&2
