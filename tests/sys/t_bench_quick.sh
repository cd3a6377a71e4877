#!/bin/bash
# make bench QUICK=1: a smoke test that every benchmark script runs end to
# end on this machine and produces its results.  It asserts no figures: CI
# shares its machine, and figures belong in docs/benchmarks.md, from a full
# `make bench`.
. "$(dirname "$0")/../lib/common.sh"
need_root
cd "$TESTS/.."
rm -f build/bench/results.json
make --no-print-directory bench QUICK=1 >"$WORK/bench.log" 2>&1 || { tail -40 "$WORK/bench.log"; fail "make bench QUICK=1 failed"; }
python3 - <<'PY'
import json
r = json.load(open("build/bench/results.json"))
for key in ("overhead", "kernel_cost", "continuous", "heap", "stacks", "offcpu"):
    assert r.get(key), f"results.json has no {key}"
assert r["quick"] is True
print("ok: make bench QUICK=1 produced", ", ".join(sorted(k for k in r if isinstance(r[k], dict))))
PY
git diff --quiet -- docs/benchmarks.md bench/results.json 2>/dev/null ||
	fail "the quick run changed docs/benchmarks.md or bench/results.json"
