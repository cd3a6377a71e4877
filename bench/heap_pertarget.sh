#!/bin/bash
# What per-target heap probes cost, and spare.  Run as root:
#   bash bench/heap_pertarget.sh            (PROFD_BASE=/path/to/old/profd adds its rows)
#  1. A non-target's malloc+free pair (mallocbench's CPU ns per pair) with
#     no daemon, with `serve --heap --exe T` of this build, and of
#     PROFD_BASE's if given (a build that probes every process): rounds
#     interleave, medians.  A round during which a heap program that is
#     not ours is loaded (other tests on a shared machine) is not counted.
#  2. A target's fork (FORKS=N mallocbench: fork, child exits, wait) with
#     no daemon, per-target probes (its children inherit 17 perf events)
#     and --heap-all-processes: interleaved, medians.
#  3. Attach time per target process (profd_heap_attach_seconds_total /
#     profd_heap_attach_total) with IDLE processes mapping libc beside it,
#     per target and for every process.
#  4. A target's pair with TARGETS idle targets attached beside it (the
#     kernel's filter walks one entry per target's perf event).
# Output: key=value lines.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5} SKIP_NONTARGET=${SKIP_NONTARGET:-} IDLE=${IDLE:-"0 500"} TARGETS=${TARGETS:-"1 50"}
export BUILD=$PWD/build TESTS=$PWD/tests
. tests/lib/common.sh
. tests/lib/serve.sh
cp build/tests/mallocbench "$WORK/pt_target"
cp build/tests/mallocbench "$WORK/pt_other"
declare -A res

metric() { curl -sf -m 10 "$BASE/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
foreign_heap() { # [PID]: a heap program is loaded that PID does not hold
	python3 - "${1:-}" <<'PY'
import json, os, re, subprocess, sys
mine = set()
if sys.argv[1]:
    d = f"/proc/{sys.argv[1]}/fdinfo"
    for fd in os.listdir(d):
        try:
            m = re.search(r"^prog_id:\s*(\d+)", open(f"{d}/{fd}").read(), re.M)
        except OSError:
            continue
        if m:
            mine.add(int(m.group(1)))
progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True,
                                  text=True, check=True).stdout)
sys.exit(0 if any(p.get("name", "").startswith("profd_heap") and p["id"] not in mine
                  for p in progs) else 1)
PY
}
start() { # BINARY ARGS...: serve on a free port
	local bin=$1
	shift
	PROFD=$bin serve "$(free_port 17480)" "$@"
}
stop() { kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true; }

# 1. The non-target.
variants="none new"
[ -n "${PROFD_BASE:-}" ] && variants="$variants base"
[ -n "$SKIP_NONTARGET" ] && ROUNDS=0
for r in $(seq "$ROUNDS"); do
	for v in $variants; do
		for try in $(seq 20); do
			pid=
			case $v in
			new) start build/profd --heap --exe "$WORK/pt_target"; pid=$SERVE_PID ;;
			base) start "$PROFD_BASE" --heap --exe "$WORK/pt_target"; pid=$SERVE_PID ;;
			esac
			foreign_heap "$pid" && { [ -n "$pid" ] && stop; sleep 2; continue; }
			"$WORK/pt_other" 0.5 >"$WORK/o.out"
			ok=1
			foreign_heap "$pid" && ok=0
			[ -n "$pid" ] && stop
			[ $ok = 1 ] && break
		done
		res[nt_$v]="${res[nt_$v]:-} $(awk '{ print $4 }' "$WORK/o.out")"
		echo "round $r $v: $(cat "$WORK/o.out")" >&2
	done
done

# 2. A target's forks.
for r in $(seq "${FORK_ROUNDS:-5}"); do
	for v in none pertarget all; do
		case $v in
		pertarget) start build/profd --heap --exe "$WORK/pt_target" ;;
		all) start build/profd --heap-all-processes --exe "$WORK/pt_target" ;;
		esac
		PAUSE=1 FORKS=1000 "$WORK/pt_target" >"$WORK/f.out" &
		t=$!
		for _ in $(seq 600); do
			grep -q ready "$WORK/f.out" &&
				{ [ $v = none ] || [ "$(metric profd_heap_processes_probed)" -ge 1 ]; } && break
			sleep 0.1
		done
		kill -USR1 $t
		wait $t
		[ $v = none ] || stop
		res[fork_us_$v]="${res[fork_us_$v]:-} $(awk '{ print $2 }' <(tail -1 "$WORK/f.out"))"
		res[fork_cpu_us_$v]="${res[fork_cpu_us_$v]:-} $(awk '{ print $4 }' <(tail -1 "$WORK/f.out"))"
		echo "round $r fork $v: $(tail -1 "$WORK/f.out")" >&2
	done
done

# 3. and 4.: idle processes mapping libc, idle targets.
for mode in pertarget all; do
	flag=--heap
	[ $mode = all ] && flag=--heap-all-processes
	for idle in $IDLE; do
		sleepers=()
		for _ in $(seq "$idle"); do sleep 600 & sleepers+=($!); done
		start build/profd $flag --exe "$WORK/pt_target"
		for n in $TARGETS; do
			idle_t=()
			for _ in $(seq $((n - 1))); do
				PAUSE=1 "$WORK/pt_target" 1 >/dev/null & idle_t+=($!)
			done
			PAUSE=1 "$WORK/pt_target" 0.5 >"$WORK/t.out" &
			t=$!
			for _ in $(seq 600); do
				[ $mode = all ] && break
				[ "$(metric profd_heap_attachments)" -ge "$n" ] && break
				sleep 0.1
			done
			kill -USR1 $t
			wait $t
			res[hit_${mode}_idle${idle}_targets$n]=$(awk '{ print $4 }' "$WORK/t.out")
			for p in "${idle_t[@]}"; do kill "$p"; wait "$p" 2>/dev/null || true; done
		done
		made=$(metric profd_heap_attach_total)
		secs=$(metric profd_heap_attach_seconds_total)
		res[attach_ms_${mode}_idle$idle]=$(python3 -c "print(f'{1000 * $secs / max($made, 1):.1f}')")
		stop
		for p in "${sleepers[@]}"; do kill "$p"; done
		for p in "${sleepers[@]}"; do wait "$p" 2>/dev/null || true; done
		echo "$mode idle=$idle: attach ${res[attach_ms_${mode}_idle$idle]} ms" >&2
	done
done

for k in $(printf '%s\n' "${!res[@]}" | sort); do
	python3 -c "import statistics, sys; v = [float(x) for x in sys.argv[2].split()]; print(f'{sys.argv[1]}={statistics.median(v):.1f}')" "$k" "${res[$k]}"
done
echo "libc_mappers=$(grep -l libc.so.6 /proc/[0-9]*/maps 2>/dev/null | wc -l)"
