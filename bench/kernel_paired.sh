#!/bin/bash
# Kernel time per sample of two profd builds recording at the same time:
# both programs sample the same CPUs in the same seconds, so the
# hypervisor's swings (2x between runs minutes apart on the development
# VM) reach both alike, and a round's ratio is paired.  Whichever daemon
# starts first has its event fire first on each tick, and measured ~10%
# dearer in one run: the order turns each round.  The whole system at
# 999 Hz, beside two busy inline_targets, as bench/kernel_cost.sh;
# ARGS adds record options (ARGS="--exe inline_target").
# Run as root: OLD=path/to/profd NEW=build/profd bash bench/kernel_paired.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECS:-8} ROUNDS=${ROUNDS:-6} ARGS=${ARGS:-}
OLD=${OLD:?OLD=path of the other profd} NEW=${NEW:-build/profd}
. tests/lib/common.sh
. bench/lib/bpf_stats.sh
bpf_stats_on

./build/tests/inline_target $((ROUNDS * (SECS + 5) * 2)) >/dev/null &
./build/tests/inline_target $((ROUNDS * (SECS + 5) * 2)) >/dev/null &
: >"$WORK/rows"
for r in $(seq "$ROUNDS"); do
	first=$OLD second=$NEW
	[ $((r % 2)) = 1 ] || { first=$NEW; second=$OLD; }
	# shellcheck disable=SC2086
	"$first" record --seconds "$SECS" --frequency 999 $ARGS -o "$WORK/a.pb.gz" 2>"$WORK/a.err" &
	pa=$!
	# shellcheck disable=SC2086
	"$second" record --seconds "$SECS" --frequency 999 $ARGS -o "$WORK/b.pb.gz" 2>"$WORK/b.err" &
	pb=$!
	sleep $((SECS - 1))
	read -r _ _ _ _ na ca < <(offcpu_stats_of $pa)
	read -r _ _ _ _ nb cb < <(offcpu_stats_of $pb)
	wait $pa $pb || true
	a=$((na / (ca + 1))) b=$((nb / (cb + 1)))
	if [ "$first" = "$OLD" ]; then old=$a new=$b; else old=$b new=$a; fi
	echo "round $r: old $old ns, new $new ns a sample ($([ "$first" = "$OLD" ] && echo old || echo new) first)"
	echo "$old $new" >>"$WORK/rows"
done
python3 - "$WORK/rows" <<'PY'
import statistics, sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
r = [n / o for o, n in rows if o]
print(f"median old {statistics.median(o for o, _ in rows)} ns, new "
      f"{statistics.median(n for _, n in rows)} ns; paired new/old {statistics.median(r):.3f} "
      f"(rounds {min(r):.2f}-{max(r):.2f})")
PY
