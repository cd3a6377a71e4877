#!/bin/bash
# The hand-written pprof encoder, read back by real clients: protoc decodes
# the raw profile against profile.proto, and `go tool pprof` reads the gzipped
# one.  The profile comes from tests/tools/pprof_gen.c; the values asserted
# here are the ones that program puts in.
set -euo pipefail

BUILD=${BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
GEN=$BUILD/tests/tools/pprof_gen
PROTO_DIR=/usr/share/gocode/src/github.com/google/pprof/proto
export GOCACHE=${GOCACHE:-/tmp/profd-gocache} HOME=${HOME:-/root}

fail() {
	echo "t_pprof_clients: FAIL: $*" >&2
	exit 1
}

skip() {
	echo "t_pprof_clients: SKIP: $*"
	exit 77
}

# Shows the file the failed check looked at, then fails.
fail_in() {
	echo "----- $1" >&2
	cat "$1" >&2
	echo "-----" >&2
	fail "$2"
}

# expect FILE DESCRIPTION GREP-ARGS...: a line of FILE must match.
expect() {
	local file=$1 what=$2
	shift 2
	grep -q "$@" "$file" || fail_in "$file" "$what (grep $*)"
}

[ -x "$GEN" ] || fail "$GEN is not built (make $GEN)"
for tool in protoc go gzip; do
	command -v "$tool" >/dev/null || skip "no $tool (make test-deps)"
done
[ -r "$PROTO_DIR/profile.proto" ] || skip "no $PROTO_DIR/profile.proto (make test-deps)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$GEN" "$tmp/p.pb" || fail "pprof_gen $tmp/p.pb exited $?"
"$GEN" "$tmp/p.pb.gz" gz || fail "pprof_gen $tmp/p.pb.gz gz exited $?"

# ---- gzip: a valid stream that holds exactly the raw encoding
gzip -t "$tmp/p.pb.gz" || fail "p.pb.gz is not valid gzip"
gzip -dc "$tmp/p.pb.gz" | cmp -s - "$tmp/p.pb" || fail "gunzipped p.pb.gz differs from p.pb"

# ---- protoc
protoc --decode=perftools.profiles.Profile --proto_path="$PROTO_DIR" profile.proto \
	<"$tmp/p.pb" >"$tmp/decoded.txt" 2>"$tmp/protoc.err" ||
	fail_in "$tmp/protoc.err" "protoc cannot decode the profile"

# Rewrites protoc's text so string-table indices read as the strings they
# name: "sample_type.type = "samples"", "mapping.build_id = "..."".
awk '
NR == FNR {
	if ($1 == "string_table:") {
		s = $0
		sub(/^string_table: "/, "", s)
		sub(/"$/, "", s)
		str[n++] = s
	}
	next
}
/\{$/ { path[depth++] = $1; next }
/^ *\}$/ { depth--; next }
{
	field = $1
	sub(/:$/, "", field)
	prefix = ""
	for (i = 0; i < depth; i++)
		prefix = prefix path[i] "."
	if (field ~ /^(type|unit|name|system_name|filename|build_id|key|str|num_unit)$/ ||
	    field ~ /^(comment|default_sample_type)$/)
		print prefix field " = \"" str[$2] "\""
	else if (field != "string_table")
		print prefix field " = " $2
}' "$tmp/decoded.txt" "$tmp/decoded.txt" >"$tmp/resolved.txt"

# Each location as "location ID: function:line ...", lines in encoded order.
awk '
$1 == "string_table:" {
	s = $0
	sub(/^string_table: "/, "", s)
	sub(/"$/, "", s)
	str[ns++] = s
}
/^location \{/ { in_loc = 1; nl++; next }
/^function \{/ { in_fn = 1; next }
/^\}/ { in_loc = 0; in_fn = 0; next }
in_loc && /^  line \{/ { in_line = 1; fid = 0; ln = 0; next }
in_loc && in_line && /^  \}/ { in_line = 0; lines[nl] = lines[nl] " " fid ":" ln; next }
in_loc && in_line && $1 == "function_id:" { fid = $2 }
in_loc && in_line && $1 == "line:" { ln = $2 }
in_loc && !in_line && $1 == "id:" { id[nl] = $2 }
in_fn && $1 == "id:" { cur = $2 }
in_fn && $1 == "name:" { fname[cur] = $2 }
END {
	for (i = 1; i <= nl; i++) {
		out = "location " id[i] ":"
		n = split(lines[i], parts, " ")
		for (j = 1; j <= n; j++) {
			split(parts[j], q, ":")
			out = out " " str[fname[q[1]]] ":" q[2]
		}
		print out
	}
}' "$tmp/decoded.txt" >"$tmp/locations.txt"

r=$tmp/resolved.txt
types=$(grep '^sample_type\.' "$r" | sed 's/.* = //' | tr -d '"' | paste -sd' ')
[ "$types" = "samples count cpu nanoseconds" ] ||
	fail_in "$r" "sample_type is [$types], want [samples count cpu nanoseconds]"
expect "$r" "period_type type" -Fx 'period_type.type = "cpu"'
expect "$r" "period_type unit" -Fx 'period_type.unit = "nanoseconds"'
expect "$r" "period" -Fx 'period = 10101010'
expect "$r" "time_nanos" -Fx 'time_nanos = 1700000000000000000'
expect "$r" "duration_nanos" -Fx 'duration_nanos = 60000000000'
expect "$r" "comment" -Fx 'comment = "lost samples: 3"'
expect "$r" "default_sample_type" -Fx 'default_sample_type = "cpu"'
expect "$r" "build id" -Fx 'mapping.build_id = "6f1e3c0d2a4b5c6d7e8f90a1b2c3d4e5f6a7b8c9"'
expect "$r" "app mapping" -Fx 'mapping.filename = "/usr/bin/app-gen"'
expect "$r" "kernel mapping" -Fx 'mapping.filename = "[kernel.kallsyms]"'
expect "$r" "mapping flags" -Fx 'mapping.has_inline_frames = true'
expect "$r" "label pid" -Fx 'sample.label.key = "pid"'
expect "$r" "label thread_name" -Fx 'sample.label.str = "app-main"'
expect "$r" "label process_name" -Fx 'sample.label.str = "app-gen"'
nsamples=$(grep -c '^sample {' "$tmp/decoded.txt" || true)
[ "$nsamples" = 3 ] || fail_in "$tmp/decoded.txt" "$nsamples samples, want 3 (100 ticks merged)"
expect "$r" "merged sample value" -Fx 'sample.value = 606060600'

l=$tmp/locations.txt
# The inlined location: one address, two lines, innermost (hash_bytes) first.
expect "$l" "inlined location" -Fx 'location 1: hash_bytes:7 run_queries:55'
two=$(awk 'NF == 4' "$l" | wc -l)
[ "$two" = 1 ] || fail_in "$l" "$two locations with 2 lines, want 1"
expect "$l" "kernel location" -Fx 'location 4: ksys_read:0'

# ---- go tool pprof
gz=$tmp/p.pb.gz
go tool pprof -raw "$gz" >"$tmp/raw.txt" 2>"$tmp/raw.err" ||
	fail_in "$tmp/raw.err" "go tool pprof -raw cannot read the profile"
w=$tmp/raw.txt
expect "$w" "raw period type" -Fx 'PeriodType: cpu nanoseconds'
expect "$w" "raw period" -Fx 'Period: 10101010'
expect "$w" "raw comment" -Fx 'Comment: lost samples: 3'
expect "$w" "raw duration" -Fx 'Duration: 1m0s'
expect "$w" "raw sample types" -F 'samples/count cpu/nanoseconds[dflt]'
expect "$w" "raw hot sample" -E '^ +60 +606060600: 1 2 *$'
expect "$w" "raw kernel sample" -E '^ +15 +151515150: 4 5 6 3 2 *$'
expect "$w" "raw labels" -E 'process_name:\[app-gen\] thread_name:\[app-main\]'
expect "$w" "raw num labels" -E 'pid:\[4242\] tid:\[4243\]'
grep -A1 -E '^ +1: 0x555555555200 M=1 hash_bytes hash.h:7 ' "$w" |
	grep -qE '^ +run_queries app.c:55 ' ||
	fail_in "$w" "raw: location 1 should be hash_bytes inlined into run_queries"
build_id=6f1e3c0d2a4b5c6d7e8f90a1b2c3d4e5f6a7b8c9
expect "$w" "raw build id" -Fx \
	"1: 0x555555554000/0x555555600000/0x0 /usr/bin/app-gen $build_id [FN][FL][LN][IN]"
expect "$w" "raw kernel mapping" -E \
	'^2: 0xffffffff81000000/0xffffffff83000000/0x0 \[kernel.kallsyms\]'

go tool pprof -top -sample_index=samples "$gz" >"$tmp/top.txt" 2>"$tmp/top.err" ||
	fail_in "$tmp/top.err" "go tool pprof -top cannot read the profile"
t=$tmp/top.txt
expect "$t" "top total" -F 'Total samples = 100'
# top_check FUNC FLAT CUM: the -top row of FUNC (a line of
# "flat flat% sum% cum cum% name [(inline)]").
top_check() {
	local row
	row=$(awk -v f="$1" '$6 == f { print $1, $4 }' "$t")
	[ "$row" = "$2 $3" ] || fail_in "$t" "top: $1 has flat/cum [$row], want [$2 $3]"
}
top_check hash_bytes 60 60
top_check run_queries 0 60
top_check parse_query 25 40
top_check ksys_read 15 15
top_check entry_SYSCALL_64 0 15
top_check main 0 100
expect "$t" "hash_bytes shown as inlined" -E ' hash_bytes \(inline\)$'

# With no -sample_index, pprof picks default_sample_type (cpu).
go tool pprof -top "$gz" >"$tmp/top_cpu.txt" 2>"$tmp/top_cpu.err" ||
	fail_in "$tmp/top_cpu.err" "go tool pprof -top (default sample type) failed"
expect "$tmp/top_cpu.txt" "default type is cpu" -Fx 'Type: cpu'
expect "$tmp/top_cpu.txt" "cpu time of hash_bytes" -E \
	'^ +606\.06ms +60\.00% .* hash_bytes \(inline\)$'

echo "t_pprof_clients: ok (protoc and go tool pprof read the profile)"
