#!/bin/bash
# Heap profiles that do not spike in a delta scraper (issue 22, defect 5).
# Grafana Alloy's pyroscope.scrape turns each allocs scrape into a delta
# against the one before, identifying a sample by its locations' addresses
# and its labels (grafana/alloy, internal/component/pyroscope/scrape/
# internal/fastdelta): a site whose labels or stack change between scrapes
# is a new sample, and its whole cumulative alloc_* is reported again.
# Under connection churn (pgbench -C: a backend per transaction, gone in
# milliseconds) with a process table small enough to forget the exited
# backends between the scrapes, two consecutive scrapes go through that
# delta computation here: every sample of the first is in the second with
# the same identity, so the deltas add up to what was allocated between
# them and no site seen before comes back whole.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"
. "$(dirname "$0")/../lib/postgres.sh"

echo '{"max_processes": 16}' >"$WORK/conf.json"
serve "$(free_port 17540)" --config "$WORK/conf.json" --heap --exe postgres \
	--heap-sample-bytes 16384
pgbench_run -C -c 2 -T 3 -S
call s1 GET /debug/pprof/allocs
expect_code s1 200 "the first scrape"
pgbench_run -C -c 2 -T 3 -S
call s2 GET /debug/pprof/allocs
expect_code s2 200 "the second scrape"
python3 - "$WORK/s1.body" "$WORK/s2.body" <<'PY'
import sys, pprof_raw

def samples(path):
    """Alloy's identity (location addresses in order, labels sorted) ->
    [alloc_objects, alloc_space], duplicates summed as fastdelta does."""
    p = pprof_raw.load(path)
    assert p.sample_types[:2] == ["alloc_objects/count", "alloc_space/bytes[dflt]"], p.sample_types
    out = {}
    for s in p.samples:
        key = (tuple(p.locations[l]["addr"] for l in s["locs"]),
               tuple(sorted(s["labels"].items())))
        v = out.setdefault(key, [0, 0])
        v[0] += s["values"][0]
        v[1] += s["values"][1]
    return out

a, b = samples(sys.argv[1]), samples(sys.argv[2])
# fastdelta: a sample's delta is its value less its value in the last scrape
# that had it; a sample it has not seen counts whole.
delta = {k: [v[i] - a.get(k, [0, 0])[i] for i in (0, 1)] for k, v in b.items()}
gone = [k for k in a if a[k][1] and k not in b]
whole = sum(b[k][1] for k in b if k not in a)
assert not gone, (f"{len(gone)} of {len(a)} samples of the first scrape are not in the second "
                  f"(identity changed), e.g. {gone[0]}")
backends = [k for k in a if ("backend_type", "client backend") in k[1]]
assert backends, "no client backend sample in the first scrape: labels of exited backends lost"
d = sum(v[1] for v in delta.values())
t1, t2 = sum(v[1] for v in a.values()), sum(v[1] for v in b.values())
assert d == t2 - t1, (d, t1, t2)
print(f"ok: {len(a)} samples ({len(backends)} of client backends), all in the second scrape "
      f"with the same locations and labels; deltas {d / 1048576:.1f} MiB = "
      f"{t2 / 1048576:.1f} - {t1 / 1048576:.1f} MiB; new samples {whole / 1048576:.1f} MiB")
PY
grep -q "profd_processes_evicted_total [1-9]" <(curl -sf "$BASE/metrics") ||
	fail "no exited process was evicted from the table: the test tested nothing"
