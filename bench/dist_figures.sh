#!/bin/bash
# The static profd of `make dist` against the dynamic build of `make`
# (docs/benchmarks.md, "The static build"): sizes, start-up time to the
# first /health answer, and resident memory idle and after one profile.
#
# Rounds alternate static and dynamic (S D S D ...), so load from anything
# else on the machine falls on both alike.  Each round: `profd serve
# --pid P` of a busy workload (build/tests/inline_target) on a free port;
# the time from exec to the first 200 from /health (curl every 5 ms); RSS
# (VmRSS, RssAnon, RssFile of /proc/PID/status) 2 s later; one 3 s CPU
# profile of P; RSS again.  Medians over ROUNDS (default 5) per build.
#
# Usage (root, after `make` and `make dist`): bench/dist_figures.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
DYN=build/profd
STATIC=build-static/profd
tarball=$(ls -t dist/profd-*-linux.tar.gz 2>/dev/null | head -1)
[ -x "$DYN" ] && [ -x "$STATIC" ] && [ -n "$tarball" ] ||
	{ echo "run make, make dist and make build/tests/inline_target first" >&2; exit 1; }
[ -x build/tests/inline_target ] || { echo "no build/tests/inline_target" >&2; exit 1; }
W=$(mktemp -d /tmp/profd-distfig.XXXXXX)
BURN=""
trap '[ -n "$BURN" ] && kill $BURN 2>/dev/null; rm -rf "$W"' EXIT

kib() { du -k "$1" | cut -f1; }
# The dynamic build as it would ship: stripped, plus the libraries it loads
# that a minimal Debian root lacks (every one ldd lists but libc's own).
strip -o "$W/profd.dyn" "$DYN"
closure=0
for lib in $(ldd "$DYN" | awk '$3 ~ /^\// {print $3}'); do
	case $(basename "$lib") in libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*) continue ;; esac
	closure=$((closure + $(du -kL "$lib" | cut -f1)))
done
nlibs=$(ldd "$DYN" | grep -c '=>' || true)
tar -xzf "$tarball" -C "$W"
sdir=$(ls -d "$W"/profd-*-linux)
echo "commit $(git describe --always --dirty)  kernel $(uname -r)  $(nproc) CPUs  load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "size: static tarball $(kib "$tarball") KiB; static profd stripped $(kib "$sdir/profd") KiB, profd.debug $(kib "$sdir/profd.debug") KiB"
echo "size: dynamic profd stripped $(kib "$W/profd.dyn") KiB, unstripped $(kib "$DYN") KiB; $nlibs shared libraries, $closure KiB beyond libc"

build/tests/inline_target 100000 >/dev/null &
BURN=$!
status_kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
port=17900
round() { # NAME BINARY
	local name=$1 bin=$2 pid t0 t1 ms
	port=$((port + 1))
	while (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do port=$((port + 1)); done
	t0=$(date +%s%N)
	"$bin" serve --listen 127.0.0.1:$port --pid $BURN 2>"$W/$name.err" &
	pid=$!
	until curl -sf -m 1 -o /dev/null "http://127.0.0.1:$port/health"; do
		kill -0 $pid 2>/dev/null || { cat "$W/$name.err" >&2; exit 1; }
		sleep 0.005
	done
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	sleep 2
	local idle="$(status_kib $pid VmRSS) $(status_kib $pid RssAnon) $(status_kib $pid RssFile)"
	curl -sf -m 30 -o "$W/p.pb.gz" "http://127.0.0.1:$port/debug/pprof/profile?seconds=3"
	local after="$(status_kib $pid VmRSS) $(status_kib $pid RssAnon) $(status_kib $pid RssFile)"
	kill $pid; wait $pid 2>/dev/null || true
	echo "$name $ms $idle $after" >>"$W/rounds"
}
for _ in $(seq "$ROUNDS"); do
	round static "$sdir/profd"
	round dynamic "$DYN"
done
python3 - "$W/rounds" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault(f[0], []).append([int(x) for x in f[1:]])
cols = ["start-up ms", "idle VmRSS MiB", "idle RssAnon", "idle RssFile",
        "after VmRSS", "after RssAnon", "after RssFile"]
print("| build | rounds | " + " | ".join(cols) + " |")
print("|---|---|" + "---|" * len(cols))
for name, rs in rows.items():
    med = [st.median(c) for c in zip(*rs)]
    lo = [min(c) for c in zip(*rs)]
    hi = [max(c) for c in zip(*rs)]
    cells = [f"{med[0]:.0f} ({lo[0]}-{hi[0]})"]
    cells += [f"{m / 1024:.1f} ({a / 1024:.1f}-{b / 1024:.1f})" for m, a, b in zip(med[1:], lo[1:], hi[1:])]
    print(f"| {name} | {len(rs)} | " + " | ".join(cells) + " |")
PY
